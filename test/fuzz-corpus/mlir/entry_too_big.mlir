func.func @f(%m: memref<65537x1xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<65537x1xi8> -> !fetch.stream<main, [65537], [1], i8>
  %r = rngd.to_trf %s0 : !fetch.stream<main, [65537], [1], i8> -> !rngd.trf<i8>
  func.return
}

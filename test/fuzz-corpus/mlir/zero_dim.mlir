func.func @f(%m: memref<16x16xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi8> -> !fetch.stream<main, [0], [16], i8>
  %r = rngd.to_trf %s0 : !fetch.stream<main, [0], [16], i8> -> !rngd.trf<i8>
  func.return
}

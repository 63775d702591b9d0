func.func @f(%m: memref<2x4294967296xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<2x4294967296xi8> -> !fetch.stream<main, [2], [4294967296], i8>
  %r = rngd.to_trf %s0 : !fetch.stream<main, [2], [4294967296], i8> -> !rngd.trf<i8>
  func.return
}

func.func @f(%m: memref<4294967296x16xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<4294967296x16xi8> -> !fetch.stream<main, [4294967296], [16], i8>
  %r = rngd.to_trf %s0 : !fetch.stream<main, [4294967296], [16], i8> -> !rngd.trf<i8>
  func.return
}

func.func @f(%m: memref<8x4xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<8x4xi8> -> !fetch.stream<sub, [8], [4], i8>
  %r = rngd.to_trf %s0 : !fetch.stream<sub, [8], [4], i8> -> !rngd.trf<i8>
  func.return
}

func.func @f(%m: memref<16x16xi8>, %o: memref<256xi16>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi8> -> !fetch.stream<main, [16], [16], i16>
  rngd.commit %s0, %o : !fetch.stream<main, [16], [16], i16>, memref<256xi16>
  func.return
}

func.func @f(%m: memref<16x16xi8>, %o: memref<256xi8>, %o2: memref<256xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi8> -> !fetch.stream<main, [16], [16], i8>
  rngd.commit %s0, %o : !fetch.stream<main, [16], [16], i8>, memref<256xi8>
  rngd.commit %s0, %o2 : !fetch.stream<main, [16], [16], i8>, memref<256xi8>
  func.return
}

func.func @f(%m: memref<16x16xi8>, %o: memref<256xi9>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi8> -> !fetch.stream<main, [16], [16], i8>
  %s1 = fetch.zp_sub %s0, 0 : !fetch.stream<main, [16], [16], i8> -> !fetch.stream<main, [16], [16], i9>
  rngd.commit %s1, %o : !fetch.stream<main, [16], [16], i9>, memref<256xi9>
  func.return
}

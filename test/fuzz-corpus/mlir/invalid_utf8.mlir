func.func @f(%m: memref<16x16xi8>, %o: mÿþemref<256xi32>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi8> -> !fetch.stream<main, [16], [16], i8>
  %s1 = fetch.cast %s0 : !fetch.stream<main, [16], [16], i8> -> !fetch.stream<main, [16], [16], i32>
  rngd.commit %s1, %o : !fetch.stream<main, [16], [16], i32>, memref<256xi32>
  func.return
}

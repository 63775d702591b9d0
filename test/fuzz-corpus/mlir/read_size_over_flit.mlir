func.func @f(%m: memref<16x32xi8>, %o: memref<512xi32>) {
  %s0 = fetch.fetch %m {base = 0 : i64, read_size = 16 : i64} : memref<16x32xi8> -> !fetch.stream<main, [16], [32], i8>
  %s1 = fetch.cast %s0 : !fetch.stream<main, [16], [32], i8> -> !fetch.stream<main, [16], [32], i32>
  rngd.commit %s1, %o : !fetch.stream<main, [16], [32], i32>, memref<512xi32>
  func.return
}

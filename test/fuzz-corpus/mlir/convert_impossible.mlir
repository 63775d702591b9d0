func.func @f(%m: memref<16x16xf32>, %o: memref<256xf8E4M3FN>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xf32> -> !fetch.stream<main, [16], [16], f32>
  %s1 = fetch.convert %s0 : !fetch.stream<main, [16], [16], f32> -> !fetch.stream<main, [16], [16], f8E4M3FN>
  rngd.commit %s1, %o : !fetch.stream<main, [16], [16], f8E4M3FN>, memref<256xf8E4M3FN>
  func.return
}

func.func @f(%m: memref<16x16xf4E2M1FN>, %o: memref<256xf32>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xf4E2M1FN> -> !fetch.stream<main, [16], [16], f4E2M1FN>
  %s1 = fetch.table_lookup %s0 : !fetch.stream<main, [16], [16], f4E2M1FN> -> !fetch.stream<main, [16], [16], f32>
  rngd.commit %s1, %o : !fetch.stream<main, [16], [16], f32>, memref<256xf32>
  func.return
}

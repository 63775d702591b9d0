func.func @f(%m: memref<16x16xf8E4M3FN>, %o: memref<256xbf16>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xf8E4M3FN> -> !fetch.stream<main, [16], [16], f8E4M3FN>
  %s1 = fetch.cast %s0 : !fetch.stream<main, [16], [16], f8E4M3FN> -> !fetch.stream<main, [16], [16], f32>
  %s2 = fetch.table_lookup %s1 : !fetch.stream<main, [16], [16], f32> -> !fetch.stream<main, [16], [16], bf16>
  rngd.commit %s2, %o : !fetch.stream<main, [16], [16], bf16>, memref<256xbf16>
  func.return
}

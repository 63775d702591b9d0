func.func @f(%m: memref<4x24xf4E2M1FN>, %o: memref<64xf8E4M3FN>) {
  %s0 = fetch.fetch %m {base = 0 : i64, map = affine_map<(d0, d1) -> (d0, d1 + 1)>} : memref<4x24xf4E2M1FN> -> !fetch.stream<main, [4], [16], f4E2M1FN>
  %s1 = fetch.table_lookup %s0 : !fetch.stream<main, [4], [16], f4E2M1FN> -> !fetch.stream<main, [4], [16], f8E4M3FN>
  rngd.commit %s1, %o : !fetch.stream<main, [4], [16], f8E4M3FN>, memref<64xf8E4M3FN>
  func.return
}

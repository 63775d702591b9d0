func.func @k0(%m0: memref<4096x7x8xf4E2M1FN>, %o0: memref<229376xf8E5M2>) {
  %s0_0 = fetch.fetch %m0 {base = 6291456 : i64} : memref<4096x7x8xf4E2M1FN> -> !fetch.stream<main, [4096, 7], [8], f4E2M1FN>
  %s0_1 = fetch.table_lookup %s0_0 : !fetch.stream<"\", [4096, 7], [8], f4E2M1FN> -> !fetch.stream<main, [4096, 7], [8], f8E5M2>
  rngd.commit %s0_1, %o0 : !fetch.stream<main, [4096, 7], [8], f8E5M2>, memref<229376xf8E5M2>
  func.return
}

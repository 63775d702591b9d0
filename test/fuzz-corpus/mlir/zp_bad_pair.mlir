func.func @f(%m: memref<16x16xi4>, %w: !rngd.trf<i8>, %o: memref<256xi32>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi4> -> !fetch.stream<main, [16], [16], i4>
  %s1 = fetch.zp_sub %s0, 0 : !fetch.stream<main, [16], [16], i4> -> !fetch.stream<main, [16], [16], i9>
  %sw = rngd.switch %s1 : !fetch.stream<main, [16], [16], i9> -> !fetch.stream<main, [16], [16], i9>
  %co = rngd.collect %sw : !fetch.stream<main, [16], [16], i9> -> !fetch.stream<main, [16], [16], i9>
  %y = rngd.contract_outer %co, %w : !fetch.stream<main, [16], [16], i9>, !rngd.trf<i8> -> !fetch.stream<main, [16], [16], i32>
  rngd.commit %y, %o : !fetch.stream<main, [16], [16], i32>, memref<256xi32>
  func.return
}

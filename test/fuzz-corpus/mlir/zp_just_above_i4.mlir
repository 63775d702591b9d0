func.func @f(%m: memref<16x16xi4>, %w: !rngd.trf<i4>, %o: memref<256xi32>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi4> -> !fetch.stream<main, [16], [16], i4>
  %s1 = fetch.zp_sub %s0, 8 : !fetch.stream<main, [16], [16], i4> -> !fetch.stream<main, [16], [16], i5>
  %sw = rngd.switch %s1 : !fetch.stream<main, [16], [16], i5> -> !fetch.stream<main, [16], [16], i5>
  %co = rngd.collect %sw : !fetch.stream<main, [16], [16], i5> -> !fetch.stream<main, [16], [16], i5>
  %y = rngd.contract_outer %co, %w : !fetch.stream<main, [16], [16], i5>, !rngd.trf<i4> -> !fetch.stream<main, [16], [16], i32>
  rngd.commit %y, %o : !fetch.stream<main, [16], [16], i32>, memref<256xi32>
  func.return
}

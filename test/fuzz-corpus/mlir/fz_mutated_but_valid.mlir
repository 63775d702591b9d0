

func.func @i4_above(%a: memref<64x32xi4>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-error @+1 {{'fetch.zp_sub' op zero point 8 is outside the i4 range [-8, 7]}}
  %z = fetch.zp_sub %q, -8 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}


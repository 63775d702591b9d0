func.func @k(%a: memref<64x32xf4E2M1FN>, %oa: memref<2048xf32>, %b: memref<64x32xi8>, %w: !rngd.trf<i8>, %ob: memref<2048xi32>, %c: memref<16x8xbf16>, %oc: memref<128xbf16>) {
  %a0 = fetch.fetch %a {base = 0 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %a1 = fetch.convert %a0 : !fetch.stream<main, [64], [32], f4E2M1FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %a1, %oa : !fetch.stream<main, [64], [32], f32>, memref<2048xf32>
  %b0 = fetch.fetch %b {base = 4096 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %b1 = fetch.zp_sub %b0, -3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %b2 = rngd.switch %b1 : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  %b3 = rngd.collect %b2 : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  %b4 = rngd.contract_outer %b3, %w : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %b4, %ob : !fetch.stream<main, [64], [32], i32>, memref<2048xi32>
  %c0 = fetch.fetch %c {base = 8192 : i64} : memref<16x8xbf16> -> !fetch.stream<sub, [16], [8], bf16>
  rngd.commit %c0, %oc : !fetch.stream<sub, [16], [8], bf16>, memref<128xbf16>
  func.return
}

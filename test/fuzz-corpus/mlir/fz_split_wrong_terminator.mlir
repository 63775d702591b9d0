

// A stream cannot cross into a region: a loop would consume it once per
// iteration.
func.func @into_a_loop(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %lb: index, %ub: index, %st: index) {
  // expected-note @+1 {{the stream is produced here}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  scf.for %i = %lb to %ub step %st {
    // expected-error @+1 {{'rngd.commit' op its input stream is produced outside this op's block, but a stream cannot cross a block or region boundary (it would be consumed once per execution of the region, or not at all); read the memref with fetch.fetch in the bloh %s3_1 : !fetch.stream<main, [1000, 1000], [1], bf16> -> !fetch.stream<main, [1000, 1000], [1], bf16>
  %co3 = rngd.collect %sw3 : !fetch.stream<main, [1000, 1000], [1], bf16> -> !fetch.stream<main, [1000, 1000], [1], bf16>
  rngd.commit %co3, %o3 : !fetch.stream<main, [1000, 1000], [1], bf16>, memref<1000000xbf16>
  func.return
}
func.func @k2(%m0: memref<16x12xf8E5M2>, %o0: memref<192xf32>, %m1: memref<7x100xbf16>, %o1: memref<700xf32>, %m2: memref<100x4xf8E4M3FN, strided<[12, 1], offset: 2>>, %o2: memref<400xf32>, %m3: memref<4x16xi8>, %o3: memref<64xi32>) {
  %s0_0 = fetch.fetch %m0 {base = 8 : i64, map = affine_map<(d0, d1, d2) -> (d1 + d2, d0)>} : memref<16x12xf8E5M2> -> !fetch.stream<main, [12, 16], [1], f8E5M2>
  %s0_1 = fetch.table_lookup %s0_0 : !fetch.stream<main, [12, 16], [1], f8E5M2> -> !fetch.stream<main, [12, 16], [1], bf16>
  %s0_2 = fetch.cast %s0_1 : !fetch.stream<main, [12, 16], [1], bf16> -> !fetch.stream<main, [12, 16], [1], f32>
  rngd.commit %s0_2, %o0 : !fetch.stream<main, [12, 16], [1], f32>, memref<192xf32>
  %s1_0 = fetch.fetch %m1 {base = 232560 : i64, map = affine_map<(d0, d1) -> (6 - d0, d1)>} : memref<7x100xbf16> -> !fetch.stream<main, [7], [100], bf16>
  %s1_1 = fetch.cast %s1_0 : !fetch.stream<main, [7], [100], bf16> -> !fetch.stream<main, [7], [100], f32>
  rngd.commit %s1_1, %o1 : !fetch.stream<main, [7], [100], f32>, memref<700xf32>
  %s2_0 = fetch.fetch %m2 {base = 316496 : i64} : memref<100x4xf8E4M3FN, strided<[12, 1], offset: 2>> -> !fetch.stream<main, [100], [4], f8E4M3FN>
  %s2_1 = fetch.table_lookup %s2_0 : !fetch.stream<main, [100], [4], f8E4M3FN> -> !fetch.stream<main, [100], [4], bf16>
  %s2_2 = fetch.cast %s2_1 : !fetch.stream<main, [100], [4], bf16> -> !fetch.stream<main, [100], [4], f32>
  %sw2 = rngd.switch %s2_2 : !fetch.stream<main, [100], [4], f32> -> !fetch.stream<main, [100], [4], f32>
  %co2 = rngd.collect %sw2 : !fetch.stream<main, [100], [4], f32> -> !fetch.stream<main, [100], [4], f32>
  rngd.commit %co2, %o2 : !fetch.stream<main, [100], [4], f32>, memref<400xf32>
  %s3_0 = fetch.fetch %m3 {base = 8 : i64, map = affine_map<(d0, d1) -> (3 - d0, d1)>} : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %s3_1 = fetch.convert %s3_0 : !fetch.stream<sub, [4], [16], i8> -> !fetch.stream<sub, [4], [16], i32>
  %sw3 = rngd.switch %s3_1 : !fetch.stream<sub, [4], [16], i32> -> !fetch.stream<sub, [4], [16], i32>
  %co3 = rngd.collect %sw3 : !fetch.stream<sub, [4], [16], i32> -> !fetch.stream<sub, [4], [16], i32>
  rngd.commit %co3, %o3 : !fetch.stream<sub, [4], [16], i32>, memref<64xi32>
  func.return
}

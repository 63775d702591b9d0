

func.func @commit_i9(%a: memref<64x32xi8>, %o: memref<64x32xi16>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced h, f4E2M1FN> -> !fetch.stream<main, [2], [2], f8E5M2>
  %s2_2 = fetch.cast %s2_1 : !fetch.stream<main, [2], [2], f8E5M2> -> !fetch.stream<main, [2], [2], f32>
  %sw2 = rngd.switch %s2_2 : !fetch.stream<main, [2], [2], f32> -> !fetch.stream<main, [2], [2], f32>
  %co2 = rngd.collect %sw2 : !fetch.stream<main, [2], [2], f32> -> !fetch.stream<main, [2], [2], f32>
  rngd.commit %co2, %o2 : !fetch.stream<main, [2], [2], f32>, memref<4xf32>
  %s3_0 = fetch.fetch %m3 {base = 6291456 : i64, map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>} : memref<4096x100x2xi8> -> !fetch.stream<main, [4096, 100], [2], i8>
  %s3_1 = fetch.convert %s3_0 : !fetch.stream<main, [4096, 100], [2], i8> -> !fetch.stream<main, [4096, 100], [2], i32>
  rngd.commit %s3_1, %o3 : !fetch.stream<main, [4096, 100], [2], i32>, memref<819200xi32>
  func.return
}
func.func @k1(%m0: memref<5x64x2xi16>, %m1: memref<16x20xf32>, %o1: memref<256xf32>, %m2: memref<64x64xi8>, %o2: memref<4096xi32>, %m3: memref<5x8xf4E2M1FN>, %o3: memref<40xf4E2M1FN>) {
  %s0_0 = fetch.fetch %m0 {base = 0 : i64, map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>} : memref<5x64x2xi16> -> !fetch.stream<main, [5, 64], [2], i16>
  %s0_1 = fetch.cast %s0_0 : !fetch.stream<main, [5, 64], [2], i16> -> !fetch.stream<main, [5, 64], [2], i32>
  %r0 = rngd.to_vrf %s0_1 : !fetch.stream<main, [5, 64], [2], i32> -> !rngd.vrf<i32>
  %s1_0 = fetch.fetch %m1 {base = 6291456 : i64, map = affine_map<(d0, d1) -> (d0, d1 + 2)>} : memref<16x20xf32> -> !fetch.stream<main, [16], [16], f32>
  rngd.commit %s1_0, %o1 : !fetch.stream<main, [16], [16], f32>, memref<256xf32>
  %s2_0 = fetch.fetch %m2 {base = 6291456 : i64} : memref<64x64xi8> -> !fetch.stream<sub, [64], [64], i8>
  %s2_1 = fetch.cast %s2_0 : !fetch.stream<sub, [64], [64], i8> -> !fetch.stream<sub, [64], [64], i32>
  %sw2 = rngd.switch %s2_1 : !fetch.stream<sub, [64], [64], i32> -> !fetch.stream<sub, [64], [64], i32>
  %co2 = rngd.collect %sw2 : !fetch.stream<sub, [64], [64], i32> -> !fetch.stream<sub, [64], [64], i32>
  rngd.commit %co2, %o2 : !fetch.stream<sub, [64], [64], i32>, memref<4096xi32>
  %s3_0 = fetch.fetch %m3 {base = 64 : i64} : memref<5x8xf4E2M1FN> -> !fetch.stream<main, [5], [8], f4E2M1FN>
  %t3 = rngd.transpose %s3_0 : !fetch.stream<main, [5], [8], f4E2M1FN> -> !fetch.stream<main, [8], [5], f4E2M1FN>
  rngd.commit %t3, %o3 : !fetch.stream<main, [8], [5], f4E2M1FN>, memref<40xf4E2M1FN>
  func.return
}

func.func @k0(%m0: memref<61x4xf8E5M2, strided<[1, 61], offset: 10>>, %m1: memref<40x4xi16, strided<[1, 42], offset: 5>>) -> (!rngd.trf<f32>, !rngd.trf<i32>) {
  %_0 = fetch.fetch %m0 {base = 4104 : i64, map = affine_map<(d0, d1, d2) -> (33 + d0 + d2, d1)>} : memref<61x4xf8E5M2, strided<[1, 61], offset: 10>> -> !fetch.stream<main, [10, 4], [1], f8E5M2>
  %_1 = fetch.table_lookup %_0 : !fetch.stream<main, [10, 4], [1], f8E5M2> -> !fetch.stream<main, [10, 4], [1], bf16>
  %_2 = fetch.convert %_1 : !fetch.stream<main, [10, 4], [1], bf16> -> !fetch.stream<main, [10, 4], [1], f32>
  %_3 = rngd.to_trf %_2 : !fetch.stream<main, [10, 4], [1], f32> -> !rngd.trf<f32>
  %_4 = fetch.fetch %m1 {base = 4360 : i64, map = affine_map<(d0, d1, d2, d3) -> (4 + d0 * 4 + d3, 1 + d1)>} : memref<40x4xi16, strided<[1, 42], offset: 5>> -> !fetch.stream<sub, [9, 2, 1], [4], i16>
  %_5 = fetch.cast %_4 : !fetch.stream<sub, [9, 2, 1], [4], i16> -> !fetch.stream<sub, [9, 2, 1], [4], i32>
  %_6 = rngd.transpose %_5 : !fetch.stream<sub, [9, 2, 1], [4], i32> -> !fetch.stream<sub, [36], [2], i32>
  %_7 = rngd.to_trf %_6 : !fetch.stream<sub, [36], [2], i32> -> !rngd.trf<i32>
  func.return %_3, %_7 : !rngd.trf<f32>, !rngd.trf<i32>
}

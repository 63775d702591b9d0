func.func @f(%m: memref<4x64xf4E2M1FN>, %bs: memref<4x4xf8E4M3FN>, %g: f32, %o: memref<256xf32>) {
  %s0 = fetch.fetch %m {base = 0 : i64, map = affine_map<(d0, d1, d2) -> (d0, d1 * 8 + d2)>} : memref<4x64xf4E2M1FN> -> !fetch.stream<main, [4, 8], [8], f4E2M1FN>
  %w = fetch.dequant %s0, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [4, 8], [8], f4E2M1FN>, memref<4x4xf8E4M3FN>, f32 -> !fetch.stream<main, [4, 8], [8], f32>
  rngd.commit %w, %o : !fetch.stream<main, [4, 8], [8], f32>, memref<256xf32>
  func.return
}

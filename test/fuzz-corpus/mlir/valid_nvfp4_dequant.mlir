func.func @f(%m: memref<4x64xf4E2M1FN>, %bs: memref<4x4xf8E4M3FN>, %g: f32, %o: memref<256xf32>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<4x64xf4E2M1FN> -> !fetch.stream<main, [4], [64], f4E2M1FN>
  %w = fetch.dequant %s0, %bs, %g {format = "nvfp4", scale_base = 4096 : i64} : !fetch.stream<main, [4], [64], f4E2M1FN>, memref<4x4xf8E4M3FN>, f32 -> !fetch.stream<main, [4], [64], f32>
  rngd.commit %w, %o : !fetch.stream<main, [4], [64], f32>, memref<256xf32>
  func.return
}

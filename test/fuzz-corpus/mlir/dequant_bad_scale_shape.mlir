func.func @f(%m: memref<4x64xf4E2M1FN>, %bs: memref<4x3xf8E8M0FNU>, %o: memref<256xf32>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<4x64xf4E2M1FN> -> !fetch.stream<main, [4], [64], f4E2M1FN>
  %w = fetch.dequant %s0, %bs {format = "mxfp4"} : !fetch.stream<main, [4], [64], f4E2M1FN>, memref<4x3xf8E8M0FNU> -> !fetch.stream<main, [4], [64], f32>
  rngd.commit %w, %o : !fetch.stream<main, [4], [64], f32>, memref<256xf32>
  func.return
}

// A 1 x 32 NVFP4 weight: two blocks of 16 codes, one f8E4M3FN scale per
// block, an f32 tensor scale.  Read as time [1, 2], packet [16].
func.func @nv(%w: memref<1x32xf4E2M1FN>, %s: memref<1x2xf8E4M3FN>, %g: f32, %out: memref<1x32xf32>) {
  %c = fetch.fetch %w {map = affine_map<(o, p, e) -> (o, p * 16 + e)>}
      : memref<1x32xf4E2M1FN> -> !fetch.stream<main, [1, 2], [16], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"}
      : !fetch.stream<main, [1, 2], [16], f4E2M1FN>, memref<1x2xf8E4M3FN>, f32
      -> !fetch.stream<main, [1, 2], [16], f32>
  rngd.commit %d, %out : !fetch.stream<main, [1, 2], [16], f32>, memref<1x32xf32>
  func.return
}

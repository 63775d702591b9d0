func.func @decode(%w: memref<64x16xf4E2M1FN>, %out: memref<64x16xf32>, %v: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %g: f32, %o2: memref<64x32xf32>) {
  %s = fetch.fetch %w {base = 4096 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %d, %out : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  %c = fetch.fetch %v {base = 8192 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %x = fetch.dequant %c, %bs, %g {format = "nvfp4", scale_base = 16384 : i64} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %x, %o2 : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

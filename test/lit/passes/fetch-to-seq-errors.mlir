// fetch-to-seq needs fetch.convert and fetch.dequant lowered first; run on
// its own it says which pass to run.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-to-seq

func.func @convert(%b: memref<64xf8E4M3FN>, %o: memref<64xbf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf8E4M3FN> -> !fetch.stream<main, [2], [32], f8E4M3FN>
  // expected-error @+1 {{'fetch.convert' op must be lowered before fetch-to-seq: run fetch-legalize-convert first}}
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], f8E4M3FN> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], bf16>, memref<64xbf16>
  func.return
}

// -----

func.func @dequant(%w: memref<64x32xf4E2M1FN>, %s: memref<64x1xf8E8M0FNU>, %o: memref<64x32xf32>) {
  %c = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op must be lowered before fetch-to-seq: run fetch-split-scaling first}}
  %d = fetch.dequant %c, %s {format = "mxfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E8M0FNU> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

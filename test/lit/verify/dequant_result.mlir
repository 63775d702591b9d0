// fetch.dequant's result (ir.md §2, hardware.md §2.6): f32, or bf16 (the same
// f32 products narrowed by the Cast Engine). Any other element type is an
// error at the dequant that names both.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %s 2>&1 | FileCheck %s

// Valid: f32 and bf16 (passes/split-scaling.mlir shows the split of bf16:
// the f32 math, then rngd.cast).
func.func @valid(%w: memref<64x32xf4E2M1FN>, %s: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>, %p: memref<64x32xbf16>) {
  %c = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  %c2 = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %e = fetch.dequant %c2, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %e, %p : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

// -----

// CHECK: dequant_result.mlir:[[# @LINE + 4]]:8: error: 'fetch.dequant' op produces f32 or bf16 (bf16: the f32 result narrowed by the Cast Engine), not f8E4M3FN
func.func @f8(%w: memref<64x32xf4E2M1FN>, %s: memref<64x1xf8E8M0FNU>, %o: memref<64x32xf8E4M3FN>) {
  %c = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op produces f32 or bf16 (bf16: the f32 result narrowed by the Cast Engine), not f8E4M3FN}}
  %d = fetch.dequant %c, %s {format = "mxfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E8M0FNU> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f8E4M3FN>, memref<64x32xf8E4M3FN>
  func.return
}

// -----

func.func @f16(%w: memref<64x32xf4E2M1FN>, %s: memref<64x1xf8E8M0FNU>, %o: memref<64x32xf16>) {
  %c = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op produces f32 or bf16 (bf16: the f32 result narrowed by the Cast Engine), not f16}}
  %d = fetch.dequant %c, %s {format = "mxfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E8M0FNU> -> !fetch.stream<main, [64], [32], f16>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f16>, memref<64x32xf16>
  func.return
}

// fetch-split-scaling rejects codes layouts whose packets do not cover whole
// blocks along the input axis, at the fetch.dequant, with a note at the
// codes' fetch.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-split-scaling
// RUN: not %fetchc %s --split-input-file -p fetch-split-scaling --emit=mlir 2>&1 | FileCheck %s

// Half an NVFP4 block per packet.
// CHECK: split-scaling-errors.mlir:[[# @LINE + 6]]:8: error: 'fetch.dequant' op packets do not cover whole blocks along the input axis: the innermost packet dim has 8 elements, not a multiple of the 16-element block
// CHECK-NEXT: %d = fetch.dequant
// CHECK: split-scaling-errors.mlir:[[# @LINE + 2]]:8: note: the codes are fetched here
func.func @half_block(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {map = affine_map<(r, b, e) -> (r, b * 8 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 16], [8], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{'fetch.dequant' op packets do not cover whole blocks along the input axis: the innermost packet dim has 8 elements, not a multiple of the 16-element block}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64, 16], [8], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 16], [8], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 16], [8], f32>, memref<64x128xf32>
  func.return
}

// -----

// 32 codes per packet, but MXFP4 packets start mid-block (input column 16).
func.func @mx_offset(%w: memref<64x128xf4E2M1FN>, %s: memref<64x4xf8E8M0FNU>, %o: memref<64x96xf32>) {
  %c = fetch.fetch %w {map = affine_map<(r, b, e) -> (r, b * 32 + e + 16)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 3], [32], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{packets do not cover whole blocks along the input axis: the reads start at input index 16, not on a block boundary}}
  %d = fetch.dequant %c, %s {format = "mxfp4"} : !fetch.stream<main, [64, 3], [32], f4E2M1FN>, memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [64, 3], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 3], [32], f32>, memref<64x96xf32>
  func.return
}

// -----

// A time dim steps the input axis by half a block: packets straddle blocks.
func.func @time_step(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x240xf32>) {
  %c = fetch.fetch %w {map = affine_map<(r, b, e) -> (r, b * 8 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 15], [16], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{packets do not cover whole blocks along the input axis: dim 1 steps the input axis by 8, not a multiple of the 16-element block}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64, 15], [16], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 15], [16], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 15], [16], f32>, memref<64x240xf32>
  func.return
}

// -----

// The packet walks the rows, not the input axis: a column-major weight read
// column by column (contiguous in DM, but each packet spans 64 blocks).
func.func @column_major(%w: memref<64x128xf4E2M1FN, strided<[1, 64]>>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<128x64xf32>) {
  %c = fetch.fetch %w {map = affine_map<(i, e) -> (e, i)>} : memref<64x128xf4E2M1FN, strided<[1, 64]>> -> !fetch.stream<main, [128], [64], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{packets do not cover whole blocks along the input axis: the innermost packet dim does not walk the input axis (the memref's last index) with step 1}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [128], [64], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [128], [64], f32>
  rngd.commit %d, %o : !fetch.stream<main, [128], [64], f32>, memref<128x64xf32>
  func.return
}

// -----

// The block-scale memref must be (rows, cols / block); the verifier checks it,
// before any pass runs.
func.func @scale_shape(%w: memref<64x128xf4E2M1FN>, %s: memref<64x4xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {map = affine_map<(r, b, e) -> (r, b * 16 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{'fetch.dequant' op nvfp4 has one block scale per 16 codes along the input axis (the memref's last index): for codes memref<64x128> the scale memref must be 64x8, not 64x4}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64, 8], [16], f4E2M1FN>, memref<64x4xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 8], [16], f32>, memref<64x128xf32>
  func.return
}

// -----

// The scale fetch the split inserts must meet the sequencer limits too: a
// scale_base that is not a multiple of 8 is reported at the dequant, by its
// verifier (before the pass runs).
func.func @scale_base(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {map = affine_map<(r, b, e) -> (r, b * 16 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op scale_base 8196 is not a multiple of 8 bytes (it is the base of the block-scale fetch)}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 8196 : i64} : !fetch.stream<main, [64, 8], [16], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 8], [16], f32>, memref<64x128xf32>
  func.return
}

// fetch-split-scaling: fetch.dequant -> paired lookup + cast on the codes, a
// fetch of the block scales right after the codes' fetch (one scale per
// block, walking the same rows and blocks), rngd.block_scale, and for NVFP4
// rngd.tensor_scale (block scale first, tensor scale second).
// RUN: %fetchc %s -p fetch-split-scaling --emit=mlir | FileCheck %s
// RUN: %fetchc %s -p fetch-split-scaling --emit=mlir | FileCheck %s --check-prefix=GONE
// The split IR compiles on to seq.bin.
// RUN: %fetchc %s -o %t.bin && %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// GONE-NOT: fetch.dequant

// NVFP4, one 16-code block per packet.
// CHECK-LABEL: func.func @nvfp4_one_block(
// CHECK-NEXT:    %[[C:.*]] = fetch.fetch %w {base = 4096 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 16) + d2))>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN>
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %s {base = 8192 : i64, map = affine_map<(d0, d1, d2) -> (d0, (d1 + d2))>} : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64, 8], [1], f8E4M3FN>
// CHECK-NEXT:    %[[SF:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [64, 8], [1], f8E4M3FN> -> !fetch.stream<main, [64, 8], [1], f32>
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[C]] : !fetch.stream<main, [64, 8], [16], f4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f8E4M3FN>
// CHECK-NEXT:    %[[F:.*]] = fetch.cast %[[L]] : !fetch.stream<main, [64, 8], [16], f8E4M3FN> -> !fetch.stream<main, [64, 8], [16], f32>
// CHECK-NEXT:    %[[B:.*]] = rngd.block_scale %[[F]], %[[SF]] {block = 16 : i64} : !fetch.stream<main, [64, 8], [16], f32>, !fetch.stream<main, [64, 8], [1], f32> -> !fetch.stream<main, [64, 8], [16], f32>
// CHECK-NEXT:    %[[T:.*]] = rngd.tensor_scale %[[B]], %g : !fetch.stream<main, [64, 8], [16], f32>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
// CHECK-NEXT:    rngd.commit %[[T]], %o
// DIS:      program 0: "nvfp4_one_block/0"
// DIS:        in_dtype: f4E2M1FN
// DIS-NEXT:   out_dtype: f32
// DIS-NEXT:   base: 0x1000 (4096)
// DIS-NEXT:   sequencer: [8192 : 1] : 16
// DIS-NEXT:   fetch_size: 4
// DIS-NEXT:   stages: table_lookup, type_conversion
// DIS-NEXT:   table: 0
// DIS-NEXT:   type_conversion: 3 (f8E4M3FN -> f32)
// DIS:        words_per_packet: 2
// DIS:      program 1: "nvfp4_one_block/1"
// DIS:        in_dtype: f8E4M3FN
// DIS-NEXT:   out_dtype: f32
// DIS-NEXT:   base: 0x2000 (8192)
// DIS-NEXT:   sequencer: [512 : 1] : 1
// DIS-NEXT:   fetch_size: 1
// DIS-NEXT:   stages: type_conversion
// DIS-NEXT:   table: none
// DIS-NEXT:   type_conversion: 3 (f8E4M3FN -> f32)
// DIS:        words_per_packet: 1
func.func @nvfp4_one_block(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(r, b, e) -> (r, b * 16 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 8192 : i64} : !fetch.stream<main, [64, 8], [16], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 8], [16], f32>, memref<64x128xf32>
  func.return
}

// NVFP4, packets of 32 codes = 2 blocks: the scale stream's packet is [2]
// and a time dim that steps the input axis by 32 steps the scales by 2.
// CHECK-LABEL: func.func @nvfp4_two_blocks(
// CHECK-NEXT:    fetch.fetch %w
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %s {base = 12288 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 2) + d2))>} : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64, 4], [2], f8E4M3FN>
// CHECK-NEXT:    %[[SF:.*]] = fetch.cast %[[S]] : {{.*}} -> !fetch.stream<main, [64, 4], [2], f32>
// CHECK:         rngd.block_scale %{{.*}}, %[[SF]] {block = 16 : i64} : !fetch.stream<main, [64, 4], [32], f32>, !fetch.stream<main, [64, 4], [2], f32> -> !fetch.stream<main, [64, 4], [32], f32>
// CHECK-NEXT:    rngd.tensor_scale
// DIS:      program 3: "nvfp4_two_blocks/1"
// DIS:        sequencer: [512 : 1] : 2
func.func @nvfp4_two_blocks(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(r, b, e) -> (r, b * 32 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 4], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 12288 : i64} : !fetch.stream<main, [64, 4], [32], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 4], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 4], [32], f32>, memref<64x128xf32>
  func.return
}

// MXFP4, packets of 64 codes = 2 blocks of 32; raw f8E8M0FNU scales, no
// cast, no tensor scale.
// CHECK-LABEL: func.func @mxfp4_two_blocks(
// CHECK-NEXT:    %[[C:.*]] = fetch.fetch %w
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %s {base = 16384 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 2) + d2))>} : memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [64, 2], [2], f8E8M0FNU>
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[C]] : {{.*}}f4E2M1FN> -> !fetch.stream<main, [64, 2], [64], f8E4M3FN>
// CHECK-NEXT:    %[[F:.*]] = fetch.cast %[[L]] : {{.*}}f8E4M3FN> -> !fetch.stream<main, [64, 2], [64], f32>
// CHECK-NEXT:    %[[B:.*]] = rngd.block_scale %[[F]], %[[S]] {block = 32 : i64} : !fetch.stream<main, [64, 2], [64], f32>, !fetch.stream<main, [64, 2], [2], f8E8M0FNU> -> !fetch.stream<main, [64, 2], [64], f32>
// CHECK-NEXT:    rngd.commit %[[B]], %o
// DIS:      program 5: "mxfp4_two_blocks/1"
// DIS:        in_dtype: f8E8M0FNU
// DIS-NEXT:   out_dtype: f8E8M0FNU
// DIS-NEXT:   base: 0x4000 (16384)
// DIS-NEXT:   sequencer: [256 : 1] : 2
// DIS-NEXT:   fetch_size: 2
// DIS-NEXT:   stages: none
// DIS:        words_per_packet: 1
func.func @mxfp4_two_blocks(%w: memref<64x128xf4E2M1FN>, %s: memref<64x4xf8E8M0FNU>, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(r, b, e) -> (r, b * 64 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 2], [64], f4E2M1FN>
  %d = fetch.dequant %c, %s {format = "mxfp4", scale_base = 16384 : i64} : !fetch.stream<main, [64, 2], [64], f4E2M1FN>, memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [64, 2], [64], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 2], [64], f32>, memref<64x128xf32>
  func.return
}

// MXFP4 read block-major (the time dim walking the input axis is outermost,
// rows inside it), starting at row 8 and input column 64: the scale map
// walks the same rows and the matching blocks, constants divided by the
// block on the input axis only.
// CHECK-LABEL: func.func @mxfp4_block_major(
// CHECK-NEXT:    fetch.fetch %w
// CHECK-NEXT:    fetch.fetch %s {base = 16384 : i64, map = affine_map<(d0, d1, d2) -> ((d1 + 8), ((d0 + 2) + d2))>} : memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [2, 32], [1], f8E8M0FNU>
// DIS:      program 6: "mxfp4_block_major/0"
// DIS:        base: 0x1220 (4640)
// DIS-NEXT:   sequencer: [2 : 32, 32 : 128, 32 : 1] : 32
// DIS:      program 7: "mxfp4_block_major/1"
// DIS:        base: 0x4022 (16418)
// DIS-NEXT:   sequencer: [2 : 1, 32 : 4] : 1
func.func @mxfp4_block_major(%w: memref<64x128xf4E2M1FN>, %s: memref<64x4xf8E8M0FNU>, %o: memref<32x64xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(b, r, e) -> (r + 8, b * 32 + e + 64)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [2, 32], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s {format = "mxfp4", scale_base = 16384 : i64} : !fetch.stream<main, [2, 32], [32], f4E2M1FN>, memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [2, 32], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [2, 32], [32], f32>, memref<32x64xf32>
  func.return
}

// Default (identity) map: one packet per row.
// CHECK-LABEL: func.func @nvfp4_identity(
// CHECK-NEXT:    fetch.fetch %w {base = 4096 : i64} : memref<64x32xf4E2M1FN>
// CHECK-NEXT:    fetch.fetch %s {base = 8192 : i64, map = affine_map<(d0, d1) -> (d0, d1)>} : memref<64x2xf8E4M3FN> -> !fetch.stream<main, [64], [2], f8E4M3FN>
func.func @nvfp4_identity(%w: memref<64x32xf4E2M1FN>, %s: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 8192 : i64} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

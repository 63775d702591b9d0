// fetch-split-scaling: fetch.dequant -> paired lookup + cast on the codes,
// the block scales staged once through the sub Fetch Unit into the VRF
// (fetch on sub, cast to f32 for NVFP4, collect, to_vrf) right after the
// codes' fetch, reading exactly the sequence a lockstep fetch would read,
// rngd.block_scale reading the VRF, for NVFP4 rngd.tensor_scale (block scale
// first, tensor scale second), and for a bf16 result the Cast Engine's
// rngd.cast. When the staged form is impossible (the scales do not fit what
// the kernel's other VRF tensors leave of 8 KiB, or no sub fetch reads
// them), the lockstep form of before, with a remark that says why.
// RUN: %fetchc %s -p fetch-split-scaling --emit=mlir 2>/dev/null | FileCheck %s
// RUN: %fetchc %s -p fetch-split-scaling --emit=mlir 2>/dev/null | FileCheck %s --check-prefix=GONE
// RUN: %fetchc %s -p fetch-split-scaling --verify-diagnostics
// RUN: %fetchc %s -p fetch-split-scaling --emit=mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// The split IR compiles on to seq.bin.
// RUN: %fetchc %s -o %t.bin 2>/dev/null && %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// GONE-NOT: = fetch.dequant

// NVFP4, one 16-code block per packet: the lockstep scale stream would be
// [64, 8], [1] with map (r, b, e) -> (r, b + e); its dims merge into 64 rows
// of 8 scales, one 8-byte sub read (8 f32 = one flit) a row.
// CHECK-LABEL: func.func @nvfp4_one_block(
// CHECK-SAME:    ) {
// CHECK-NEXT:    %[[C:.*]] = fetch.fetch %w {base = 4096 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 16) + d2))>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN>
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %s {base = 8192 : i64, map = affine_map<(d0, d1) -> (d0, d1)>} : memref<64x8xf8E4M3FN> -> !fetch.stream<sub, [64], [8], f8E4M3FN>
// CHECK-NEXT:    %[[SF:.*]] = fetch.cast %[[S]] : !fetch.stream<sub, [64], [8], f8E4M3FN> -> !fetch.stream<sub, [64], [8], f32>
// CHECK-NEXT:    %[[K:.*]] = rngd.collect %[[SF]] : !fetch.stream<sub, [64], [8], f32> -> !fetch.stream<sub, [64], [8], f32>
// CHECK-NEXT:    %[[V:.*]] = rngd.to_vrf %[[K]] : !fetch.stream<sub, [64], [8], f32> -> !rngd.vrf<[64, 8], f32>
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[C]] : !fetch.stream<main, [64, 8], [16], f4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f8E4M3FN>
// CHECK-NEXT:    %[[F:.*]] = fetch.cast %[[L]] : !fetch.stream<main, [64, 8], [16], f8E4M3FN> -> !fetch.stream<main, [64, 8], [16], f32>
// CHECK-NEXT:    %[[B:.*]] = rngd.block_scale %[[F]], %[[V]] {block = 16 : i64} : !fetch.stream<main, [64, 8], [16], f32>, !rngd.vrf<[64, 8], f32> -> !fetch.stream<main, [64, 8], [16], f32>
// CHECK-NEXT:    %[[T:.*]] = rngd.tensor_scale %[[B]], %g : !fetch.stream<main, [64, 8], [16], f32>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
// CHECK-NEXT:    rngd.commit %[[T]], %o
// DIS:      program 0: "nvfp4_one_block/0"
// DIS-NEXT:   unit: main
// DIS-NEXT:   in_dtype: f4E2M1FN
// DIS-NEXT:   out_dtype: f32
// DIS-NEXT:   base: 0x1000 (4096)
// DIS-NEXT:   sequencer: [8192 : 1] : 16
// DIS-NEXT:   fetch_size: 4
// DIS-NEXT:   stages: table_lookup, type_conversion
// DIS-NEXT:   table: 0
// DIS-NEXT:   type_conversion: 3 (f8E4M3FN -> f32)
// DIS:        words_per_packet: 2
// DIS:      program 1: "nvfp4_one_block/1"
// DIS-NEXT:   unit: sub
// DIS-NEXT:   in_dtype: f8E4M3FN
// DIS-NEXT:   out_dtype: f32
// DIS-NEXT:   base: 0x2000 (8192)
// DIS-NEXT:   sequencer: [512 : 1] : 8
// DIS-NEXT:   fetch_size: 8
// DIS-NEXT:   stages: type_conversion
// DIS-NEXT:   table: none
// DIS-NEXT:   type_conversion: 3 (f8E4M3FN -> f32)
// DIS:        flit_count: 1
// DIS-NEXT:   words_per_packet: 1
func.func @nvfp4_one_block(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(r, b, e) -> (r, b * 16 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 8192 : i64} : !fetch.stream<main, [64, 8], [16], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 8], [16], f32>, memref<64x128xf32>
  func.return
}

// NVFP4, packets of 32 codes = 2 blocks, and a bf16 result: the same staged
// scales, the same f32 products, then the Cast Engine's narrowing.
// CHECK-LABEL: func.func @nvfp4_two_blocks_bf16(
// CHECK-NEXT:    fetch.fetch %w
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %s {base = 12288 : i64, map = affine_map<(d0, d1) -> (d0, d1)>} : memref<64x8xf8E4M3FN> -> !fetch.stream<sub, [64], [8], f8E4M3FN>
// CHECK:         %[[V:.*]] = rngd.to_vrf %{{.*}} : !fetch.stream<sub, [64], [8], f32> -> !rngd.vrf<[64, 8], f32>
// CHECK:         %[[B:.*]] = rngd.block_scale %{{.*}}, %[[V]] {block = 16 : i64} : !fetch.stream<main, [64, 4], [32], f32>, !rngd.vrf<[64, 8], f32> -> !fetch.stream<main, [64, 4], [32], f32>
// CHECK-NEXT:    %[[T:.*]] = rngd.tensor_scale %[[B]], %g
// CHECK-NEXT:    %[[N:.*]] = rngd.cast %[[T]] : !fetch.stream<main, [64, 4], [32], f32> -> !fetch.stream<main, [64, 4], [32], bf16>
// CHECK-NEXT:    rngd.commit %[[N]], %o : !fetch.stream<main, [64, 4], [32], bf16>, memref<64x128xbf16>
// DIS:      program 3: "nvfp4_two_blocks_bf16/1"
// DIS-NEXT:   unit: sub
// DIS:        sequencer: [512 : 1] : 8
func.func @nvfp4_two_blocks_bf16(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xbf16>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(r, b, e) -> (r, b * 32 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 4], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 12288 : i64} : !fetch.stream<main, [64, 4], [32], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 4], [32], bf16>
  rngd.commit %d, %o : !fetch.stream<main, [64, 4], [32], bf16>, memref<64x128xbf16>
  func.return
}

// MXFP4, packets of 64 codes = 2 blocks of 32: the raw f8E8M0FNU exponents
// are staged as they are (no adapter stage reads e8m0; 1 byte each), 32 to a
// packet (one flit, four 8-byte sub reads), no cast, no tensor scale.
// CHECK-LABEL: func.func @mxfp4_two_blocks(
// CHECK-NEXT:    %[[C:.*]] = fetch.fetch %w
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %s {base = 16384 : i64, map = affine_map<(d0, d1, d2) -> (((d0 * 8) + d1), d2)>} : memref<64x4xf8E8M0FNU> -> !fetch.stream<sub, [8], [8, 4], f8E8M0FNU>
// CHECK-NEXT:    %[[K:.*]] = rngd.collect %[[S]]
// CHECK-NEXT:    %[[V:.*]] = rngd.to_vrf %[[K]] : !fetch.stream<sub, [8], [8, 4], f8E8M0FNU> -> !rngd.vrf<[8, 8, 4], f8E8M0FNU>
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[C]] : {{.*}}f4E2M1FN> -> !fetch.stream<main, [64, 2], [64], f8E4M3FN>
// CHECK-NEXT:    %[[F:.*]] = fetch.cast %[[L]] : {{.*}}f8E4M3FN> -> !fetch.stream<main, [64, 2], [64], f32>
// CHECK-NEXT:    %[[B:.*]] = rngd.block_scale %[[F]], %[[V]] {block = 32 : i64} : !fetch.stream<main, [64, 2], [64], f32>, !rngd.vrf<[8, 8, 4], f8E8M0FNU> -> !fetch.stream<main, [64, 2], [64], f32>
// CHECK-NEXT:    rngd.commit %[[B]], %o
// DIS:      program 5: "mxfp4_two_blocks/1"
// DIS-NEXT:   unit: sub
// DIS-NEXT:   in_dtype: f8E8M0FNU
// DIS-NEXT:   out_dtype: f8E8M0FNU
// DIS-NEXT:   base: 0x4000 (16384)
// DIS-NEXT:   sequencer: [256 : 1] : 32
// DIS-NEXT:   fetch_size: 8
// DIS-NEXT:   stages: none
// DIS:        flit_count: 1
// DIS-NEXT:   words_per_packet: 4
func.func @mxfp4_two_blocks(%w: memref<64x128xf4E2M1FN>, %s: memref<64x4xf8E8M0FNU>, %o: memref<64x128xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(r, b, e) -> (r, b * 64 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 2], [64], f4E2M1FN>
  %d = fetch.dequant %c, %s {format = "mxfp4", scale_base = 16384 : i64} : !fetch.stream<main, [64, 2], [64], f4E2M1FN>, memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [64, 2], [64], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64, 2], [64], f32>, memref<64x128xf32>
  func.return
}

// MXFP4 read block-major (the time dim walking the input axis is outermost,
// rows inside it), starting at row 8 and input column 64: the scale sequence
// walks a column of the scale memref (stride 4 bytes), which no sub fetch
// of 8-byte reads can read in that order, so the scales are fetched in
// lockstep, with a remark; the lockstep map walks the same rows and the
// matching blocks, constants divided by the block on the input axis only.
// CHECK-LABEL: func.func @mxfp4_block_major(
// CHECK-SAME:    attributes {rngd.remarks = ["'fetch.dequant' op fetches its block scales in lockstep with the codes, 64 reads of 1 byte on the main Fetch Unit beside the codes' reads, instead of staging them once through the sub Fetch Unit into the VRF: no sub-context fetch reads them in their lockstep order (!fetch.stream<sub, [2], [32], f8E8M0FNU> breaks a sequencer limit: innermost sequencer entry [32 : 4] is not contiguous: a packet of 32 elements needs innermost stride 0 or 1)"]}
// CHECK-NEXT:    fetch.fetch %w
// CHECK-NEXT:    fetch.fetch %s {base = 16384 : i64, map = affine_map<(d0, d1, d2) -> ((d1 + 8), ((d0 + 2) + d2))>} : memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [2, 32], [1], f8E8M0FNU>
// CHECK-NOT:     rngd.to_vrf
// CHECK:         rngd.block_scale %{{.*}}, %{{.*}} {block = 32 : i64} : !fetch.stream<main, [2, 32], [32], f32>, !fetch.stream<main, [2, 32], [1], f8E8M0FNU> -> !fetch.stream<main, [2, 32], [32], f32>
// REMARK: split-scaling.mlir:[[# @LINE + 12]]:8: remark: 'fetch.dequant' op fetches its block scales in lockstep with the codes, 64 reads of 1 byte on the main Fetch Unit beside the codes' reads, instead of staging them once through the sub Fetch Unit into the VRF: no sub-context fetch reads them in their lockstep order (!fetch.stream<sub, [2], [32], f8E8M0FNU> breaks a sequencer limit: innermost sequencer entry [32 : 4] is not contiguous: a packet of 32 elements needs innermost stride 0 or 1)
// REMARK-NEXT: %d = fetch.dequant
// DIS:      program 6: "mxfp4_block_major/0"
// DIS:        base: 0x1220 (4640)
// DIS-NEXT:   sequencer: [2 : 32, 32 : 128, 32 : 1] : 32
// DIS:      program 7: "mxfp4_block_major/1"
// DIS-NEXT:   unit: main
// DIS:        base: 0x4022 (16418)
// DIS-NEXT:   sequencer: [2 : 1, 32 : 4] : 1
func.func @mxfp4_block_major(%w: memref<64x128xf4E2M1FN>, %s: memref<64x4xf8E8M0FNU>, %o: memref<32x64xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64, map = affine_map<(b, r, e) -> (r + 8, b * 32 + e + 64)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [2, 32], [32], f4E2M1FN>
  // expected-remark @+1 {{no sub-context fetch reads them in their lockstep order}}
  %d = fetch.dequant %c, %s {format = "mxfp4", scale_base = 16384 : i64} : !fetch.stream<main, [2, 32], [32], f4E2M1FN>, memref<64x4xf8E8M0FNU> -> !fetch.stream<main, [2, 32], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [2, 32], [32], f32>, memref<32x64xf32>
  func.return
}

// Default (identity) map, one packet of 2 blocks per row: the lockstep
// sequence is 64 rows of 2 scales; 8-scale packets span 4 rows (packet
// [4, 2]), contiguous in DM, so the sub fetch reads them with 8-byte reads.
// CHECK-LABEL: func.func @nvfp4_identity(
// CHECK-NEXT:    fetch.fetch %w {base = 4096 : i64} : memref<64x32xf4E2M1FN>
// CHECK-NEXT:    fetch.fetch %s {base = 8192 : i64, map = affine_map<(d0, d1, d2) -> (((d0 * 4) + d1), d2)>} : memref<64x2xf8E4M3FN> -> !fetch.stream<sub, [16], [4, 2], f8E4M3FN>
// CHECK:         rngd.to_vrf %{{.*}} : !fetch.stream<sub, [16], [4, 2], f32> -> !rngd.vrf<[16, 4, 2], f32>
// DIS:      program 9: "nvfp4_identity/1"
// DIS-NEXT:   unit: sub
// DIS:        sequencer: [128 : 1] : 8
func.func @nvfp4_identity(%w: memref<64x32xf4E2M1FN>, %s: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  %c = fetch.fetch %w {base = 4096 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 8192 : i64} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// The VRF budget: every VRF tensor of the kernel counts, for the whole
// kernel. A hand-written 6144-byte VRF tensor; then a dequant whose 512 f32
// scales (2048 bytes) fill the VRF to exactly 8192 bytes (staged); then a
// dequant whose 128 scales (512 bytes) no longer fit (lockstep, remark).
// CHECK-LABEL: func.func @budget(
// CHECK-SAME:    attributes {rngd.remarks = ["'fetch.dequant' op fetches its block scales in lockstep with the codes, 64 reads of 2 bytes on the main Fetch Unit beside the codes' reads, instead of staging them once through the sub Fetch Unit into the VRF: staged (16 reads of 8 bytes on the sub Fetch Unit) they would take 512 bytes of VRF (!rngd.vrf<[16, 4, 2], f32>), but the kernel's other VRF tensors leave 0 of its 8192 bytes per slice"]}
// CHECK:         rngd.to_vrf %{{.*}} -> !rngd.vrf<[192, 8], f32>
// CHECK:         fetch.fetch %s1 {{.*}} -> !fetch.stream<sub, [64], [8], f8E4M3FN>
// CHECK:         rngd.to_vrf %{{.*}} -> !rngd.vrf<[64, 8], f32>
// CHECK:         fetch.fetch %s2 {{.*}} -> !fetch.stream<main, [64], [2], f8E4M3FN>
// CHECK-NOT:     rngd.to_vrf
// CHECK:         func.return
// REMARK: split-scaling.mlir:[[# @LINE + 10]]:9: remark: 'fetch.dequant' op {{.*}}staged (16 reads of 8 bytes on the sub Fetch Unit) they would take 512 bytes of VRF (!rngd.vrf<[16, 4, 2], f32>), but the kernel's other VRF tensors leave 0 of its 8192 bytes per slice
func.func @budget(%t: memref<1536xf32>, %w1: memref<64x128xf4E2M1FN>, %s1: memref<64x8xf8E4M3FN>, %w2: memref<64x32xf4E2M1FN>,
                  %s2: memref<64x2xf8E4M3FN>, %g: f32, %o1: memref<64x128xf32>, %o2: memref<64x32xf32>) -> !rngd.vrf<[192, 8], f32> {
  %a = fetch.fetch %t {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<1536xf32> -> !fetch.stream<main, [192], [8], f32>
  %v = rngd.to_vrf %a : !fetch.stream<main, [192], [8], f32> -> !rngd.vrf<[192, 8], f32>
  %c1 = fetch.fetch %w1 {map = affine_map<(r, b, e) -> (r, b * 16 + e)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<main, [64, 8], [16], f4E2M1FN>
  %d1 = fetch.dequant %c1, %s1, %g {format = "nvfp4"} : !fetch.stream<main, [64, 8], [16], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<main, [64, 8], [16], f32>
  rngd.commit %d1, %o1 : !fetch.stream<main, [64, 8], [16], f32>, memref<64x128xf32>
  %c2 = fetch.fetch %w2 : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-remark @+1 {{but the kernel's other VRF tensors leave 0 of its 8192 bytes per slice}}
  %d2 = fetch.dequant %c2, %s2, %g {format = "nvfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d2, %o2 : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return %v : !rngd.vrf<[192, 8], f32>
}

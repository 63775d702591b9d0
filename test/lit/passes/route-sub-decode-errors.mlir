// Errors around the automatic sub-context decode route, under the default
// pipeline: a fetch.table_lookup written on sub stays a verifier error (rule
// 2) that names fetch.convert as the automatic route; a routed dequant whose
// block-scale fetch cannot run on sub, or whose packets do not cover whole
// blocks, is an error at the dequant with a note at the codes' fetch.
// RUN: %fetchc %s --split-input-file --verify-diagnostics
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-route-sub-decode
// RUN: not %fetchc %s --split-input-file --emit=seq -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out

// CHECK: route-sub-decode-errors.mlir:[[# @LINE + 4]]:8: error: 'fetch.table_lookup' op runs on the sub Fetch Unit, which has no table-lookup register (only the main context's mode_indirect_table can point at a table); decode on the main context, commit the decoded stream to DM with rngd.commit, then stage it with a plain convert-only StoTrf fetch on the sub context; or write fetch.convert instead, which fetchc routes this way automatically (fetch-route-sub-decode, in the default pipeline)
func.func @lookup_on_sub(%w: memref<64x16xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.table_lookup' op runs on the sub Fetch Unit, which has no table-lookup register (only the main context's mode_indirect_table can point at a table); decode on the main context, commit the decoded stream to DM with rngd.commit, then stage it with a plain convert-only StoTrf fetch on the sub context; or write fetch.convert instead, which fetchc routes this way automatically (fetch-route-sub-decode, in the default pipeline)}}
  %d = fetch.table_lookup %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f8E4M3FN>
  %t = rngd.to_trf %d : !fetch.stream<sub, [64], [16], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// -----

// 32 codes per packet = 2 nvfp4 block scales = 2 bytes per scale packet, but
// the sub Fetch Unit reads 8 bytes at a time.
// CHECK: route-sub-decode-errors.mlir:[[# @LINE + 5]]:8: error: 'fetch.dequant' op the fetch of its block scales (map (d0, d1) -> (d0, d1), !fetch.stream<sub, [64], [2], f8E4M3FN>) breaks a sequencer limit: the sub Fetch Unit reads exactly 8 bytes; a packet of 2 f8E4M3FN elements (2 bytes) is not a whole number of 8-byte reads
// CHECK: route-sub-decode-errors.mlir:[[# @LINE + 2]]:8: note: the codes are fetched here
func.func @scale_read(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<sub, [64], [32], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{'fetch.dequant' op the fetch of its block scales (map (d0, d1) -> (d0, d1), !fetch.stream<sub, [64], [2], f8E4M3FN>) breaks a sequencer limit: the sub Fetch Unit reads exactly 8 bytes; a packet of 2 f8E4M3FN elements (2 bytes) is not a whole number of 8-byte reads}}
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<sub, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<sub, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// Packets that start mid-block.
// CHECK: route-sub-decode-errors.mlir:[[# @LINE + 4]]:8: error: 'fetch.dequant' op packets do not cover whole blocks along the input axis: the reads start at input index 8, not on a block boundary
func.func @mid_block(%w: memref<64x128xf4E2M1FN>, %s: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x112xf32>) {
  %c = fetch.fetch %w {map = affine_map<(r, b, e) -> (r, b * 16 + e + 8)>} : memref<64x128xf4E2M1FN> -> !fetch.stream<sub, [64, 7], [16], f4E2M1FN> // expected-note {{the codes are fetched here}}
  // expected-error @+1 {{'fetch.dequant' op packets do not cover whole blocks along the input axis: the reads start at input index 8, not on a block boundary}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<sub, [64, 7], [16], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<sub, [64, 7], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64, 7], [16], f32>, memref<64x112xf32>
  func.return
}

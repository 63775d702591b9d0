// VRF tensors know their shape (hardware.md §2.6, ir.md §2): rngd.to_vrf
// stores the stream's elements time-major, so its result is
// !rngd.vrf<[time..., packet...], elem>, and rngd.block_scale may read its
// block scales from such a tensor: numel(values) / block scales, in the
// values' stream order, f32 or f8E8M0FNU. Every error says the right type.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %s 2>&1 | FileCheck %s

// Valid: the shape is the stream's [time..., packet...]; the VRF tensor may
// be read by two block scales (a register file is not a stream) and have any
// shape with the right count.
func.func @valid(%s: memref<64xf32>, %x: memref<4x128xf32>, %y: memref<8x64xf32>, %o: memref<4x128xf32>,
                 %p: memref<8x64xf32>) {
  %a = fetch.fetch %s {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<64xf32> -> !fetch.stream<sub, [8], [8], f32>
  %v = rngd.to_vrf %a : !fetch.stream<sub, [8], [8], f32> -> !rngd.vrf<[8, 8], f32>
  %f = fetch.fetch %x : memref<4x128xf32> -> !fetch.stream<main, [4], [128], f32>
  %b = rngd.block_scale %f, %v {block = 8 : i64} : !fetch.stream<main, [4], [128], f32>, !rngd.vrf<[8, 8], f32> -> !fetch.stream<main, [4], [128], f32>
  rngd.commit %b, %o : !fetch.stream<main, [4], [128], f32>, memref<4x128xf32>
  %g = fetch.fetch %y : memref<8x64xf32> -> !fetch.stream<main, [8], [64], f32>
  %c = rngd.block_scale %g, %v {block = 8 : i64} : !fetch.stream<main, [8], [64], f32>, !rngd.vrf<[8, 8], f32> -> !fetch.stream<main, [8], [64], f32>
  rngd.commit %c, %p : !fetch.stream<main, [8], [64], f32>, memref<8x64xf32>
  func.return
}

// -----

// CHECK: vrf_tensors.mlir:[[# @LINE + 4]]:8: error: 'rngd.to_vrf' op stores !fetch.stream<main, [16], [64], f32> into the VRF as !rngd.vrf<[16, 64], f32> (the stream's elements time-major, [time..., packet...], of its element type), but its result type !rngd.vrf<[64, 16], f32> has another shape: write -> !rngd.vrf<[16, 64], f32>
func.func @wrong_shape(%a: memref<16x64xf32>) -> !rngd.vrf<[64, 16], f32> {
  %s = fetch.fetch %a : memref<16x64xf32> -> !fetch.stream<main, [16], [64], f32>
  // expected-error @+1 {{'rngd.to_vrf' op stores !fetch.stream<main, [16], [64], f32> into the VRF as !rngd.vrf<[16, 64], f32> (the stream's elements time-major, [time..., packet...], of its element type), but its result type !rngd.vrf<[64, 16], f32> has another shape: write -> !rngd.vrf<[16, 64], f32>}}
  %v = rngd.to_vrf %s : !fetch.stream<main, [16], [64], f32> -> !rngd.vrf<[64, 16], f32>
  func.return %v : !rngd.vrf<[64, 16], f32>
}

// -----

// The same count, flattened: still another shape.
func.func @flattened(%a: memref<16x64xf32>) -> !rngd.vrf<[1024], f32> {
  %s = fetch.fetch %a : memref<16x64xf32> -> !fetch.stream<main, [16], [64], f32>
  // expected-error @+1 {{but its result type !rngd.vrf<[1024], f32> has another shape: write -> !rngd.vrf<[16, 64], f32>}}
  %v = rngd.to_vrf %s : !fetch.stream<main, [16], [64], f32> -> !rngd.vrf<[1024], f32>
  func.return %v : !rngd.vrf<[1024], f32>
}

// -----

func.func @wrong_element(%a: memref<16x64xbf16>) -> !rngd.vrf<[16, 64], f32> {
  %s = fetch.fetch %a : memref<16x64xbf16> -> !fetch.stream<main, [16], [64], bf16>
  // expected-error @+1 {{'rngd.to_vrf' op stores !fetch.stream<main, [16], [64], bf16> into the VRF as !rngd.vrf<[16, 64], bf16> (the stream's elements time-major, [time..., packet...], of its element type), but its result type !rngd.vrf<[16, 64], f32> has another element type: write -> !rngd.vrf<[16, 64], bf16>}}
  %v = rngd.to_vrf %s : !fetch.stream<main, [16], [64], bf16> -> !rngd.vrf<[16, 64], f32>
  func.return %v : !rngd.vrf<[16, 64], f32>
}

// -----

// One scale per block: 512 values in blocks of 16 need 32 scales, not 64.
// CHECK: vrf_tensors.mlir:[[# @LINE + 6]]:8: error: 'rngd.block_scale' op its VRF block scales hold 64 scales (!rngd.vrf<[8, 8], f32>), but 512 values in blocks of 16 need 32: one scale per block, in the values' stream order (e.g. !rngd.vrf<[32], f32>)
func.func @wrong_count(%s: memref<64xf32>, %x: memref<4x128xf32>, %o: memref<4x128xf32>) {
  %a = fetch.fetch %s {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<64xf32> -> !fetch.stream<sub, [8], [8], f32>
  %v = rngd.to_vrf %a : !fetch.stream<sub, [8], [8], f32> -> !rngd.vrf<[8, 8], f32>
  %f = fetch.fetch %x : memref<4x128xf32> -> !fetch.stream<main, [4], [128], f32>
  // expected-error @+1 {{'rngd.block_scale' op its VRF block scales hold 64 scales (!rngd.vrf<[8, 8], f32>), but 512 values in blocks of 16 need 32: one scale per block, in the values' stream order (e.g. !rngd.vrf<[32], f32>)}}
  %b = rngd.block_scale %f, %v {block = 16 : i64} : !fetch.stream<main, [4], [128], f32>, !rngd.vrf<[8, 8], f32> -> !fetch.stream<main, [4], [128], f32>
  rngd.commit %b, %o : !fetch.stream<main, [4], [128], f32>, memref<4x128xf32>
  func.return
}

// -----

// Raw NVFP4 scales: the Vector Engine reads f32 (widen them with fetch.cast)
// or MXFP4's f8E8M0FNU.
func.func @wrong_scale_type(%s: memref<64xf8E4M3FN>, %x: memref<4x128xf32>, %o: memref<4x128xf32>) {
  %a = fetch.fetch %s {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<64xf8E4M3FN> -> !fetch.stream<sub, [8], [8], f8E4M3FN>
  %v = rngd.to_vrf %a : !fetch.stream<sub, [8], [8], f8E4M3FN> -> !rngd.vrf<[8, 8], f8E4M3FN>
  %f = fetch.fetch %x : memref<4x128xf32> -> !fetch.stream<main, [4], [128], f32>
  // expected-error @+1 {{'rngd.block_scale' op block scales must be f32 or f8E8M0FNU, not f8E4M3FN}}
  %b = rngd.block_scale %f, %v {block = 8 : i64} : !fetch.stream<main, [4], [128], f32>, !rngd.vrf<[8, 8], f8E4M3FN> -> !fetch.stream<main, [4], [128], f32>
  rngd.commit %b, %o : !fetch.stream<main, [4], [128], f32>, memref<4x128xf32>
  func.return
}

// -----

// The block still divides the values' innermost packet dim (blocks never
// straddle packets).
func.func @straddles(%s: memref<64xf32>, %x: memref<4x128xf32>, %o: memref<4x128xf32>) {
  %a = fetch.fetch %s {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<64xf32> -> !fetch.stream<sub, [8], [8], f32>
  %v = rngd.to_vrf %a : !fetch.stream<sub, [8], [8], f32> -> !rngd.vrf<[8, 8], f32>
  %f = fetch.fetch %x {map = affine_map<(a, b, e) -> (a, b * 16 + e)>} : memref<4x128xf32> -> !fetch.stream<main, [4, 8], [16], f32>
  // expected-error @+1 {{'rngd.block_scale' op block 32 does not divide the innermost packet dim 16}}
  %b = rngd.block_scale %f, %v {block = 32 : i64} : !fetch.stream<main, [4, 8], [16], f32>, !rngd.vrf<[8, 8], f32> -> !fetch.stream<main, [4, 8], [16], f32>
  rngd.commit %b, %o : !fetch.stream<main, [4, 8], [16], f32>, memref<4x128xf32>
  func.return
}

// -----

// Neither a stream nor a VRF tensor.
func.func @not_a_register(%x: memref<4x128xf32>, %t: !rngd.trf<f32>, %o: memref<4x128xf32>) {
  %f = fetch.fetch %x : memref<4x128xf32> -> !fetch.stream<main, [4], [128], f32>
  // expected-error @+1 {{'rngd.block_scale' op takes its block scales from a !fetch.stream in lockstep or a !rngd.vrf tensor, not !rngd.trf<f32>}}
  %b = rngd.block_scale %f, %t {block = 16 : i64} : !fetch.stream<main, [4], [128], f32>, !rngd.trf<f32> -> !fetch.stream<main, [4], [128], f32>
  rngd.commit %b, %o : !fetch.stream<main, [4], [128], f32>, memref<4x128xf32>
  func.return
}

// The VRF budget (hardware.md §2.6): the VRF tensors of one kernel (every
// rngd.to_vrf of a func.func, counted as live for the whole kernel) hold at
// most 8 KiB per slice, bytes = elements x element bytes. More is an error
// at the rngd.to_vrf that crosses the budget, naming every VRF tensor's size
// and the total.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %s 2>&1 | FileCheck %s

// Valid: exactly 8192 bytes (1024 f32 and 4096 f8E8M0FNU), and another
// kernel's VRF is its own.
func.func @exactly_full(%a: memref<1024xf32>, %b: memref<4096xf8E8M0FNU>) -> (!rngd.vrf<[128, 8], f32>, !rngd.vrf<[128, 32], f8E8M0FNU>) {
  %s = fetch.fetch %a {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<1024xf32> -> !fetch.stream<sub, [128], [8], f32>
  %v = rngd.to_vrf %s : !fetch.stream<sub, [128], [8], f32> -> !rngd.vrf<[128, 8], f32>
  %e = fetch.fetch %b {map = affine_map<(t, e) -> (t * 32 + e)>} : memref<4096xf8E8M0FNU> -> !fetch.stream<sub, [128], [32], f8E8M0FNU>
  %w = rngd.to_vrf %e : !fetch.stream<sub, [128], [32], f8E8M0FNU> -> !rngd.vrf<[128, 32], f8E8M0FNU>
  func.return %v, %w : !rngd.vrf<[128, 8], f32>, !rngd.vrf<[128, 32], f8E8M0FNU>
}
func.func @another_kernel(%a: memref<2048xf32>) -> !rngd.vrf<[256, 8], f32> {
  %s = fetch.fetch %a {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<2048xf32> -> !fetch.stream<sub, [256], [8], f32>
  %v = rngd.to_vrf %s : !fetch.stream<sub, [256], [8], f32> -> !rngd.vrf<[256, 8], f32>
  func.return %v : !rngd.vrf<[256, 8], f32>
}

// -----

// Three VRF tensors: the third crosses 8192 bytes.
// CHECK: vrf_budget.mlir:[[# @LINE + 9]]:8: error: 'rngd.to_vrf' op crosses the VRF budget: the kernel's VRF tensors hold 8704 bytes per slice (%v !rngd.vrf<[128, 8], f32> 4096 bytes, %w !rngd.vrf<[64, 32], bf16> 4096 bytes, %x !rngd.vrf<[16, 32], i8> 512 bytes), more than the 8192 bytes of one slice's VRF; the VRF tensors before it leave 0 bytes for its 512 (stage fewer elements per slice, e.g. fewer rows per slice with more rngd.slices)
func.func @over(%a: memref<1024xf32>, %b: memref<64x32xbf16>, %c: memref<16x32xi8>)
    -> (!rngd.vrf<[128, 8], f32>, !rngd.vrf<[64, 32], bf16>, !rngd.vrf<[16, 32], i8>) {
  %s = fetch.fetch %a {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<1024xf32> -> !fetch.stream<sub, [128], [8], f32>
  %v = rngd.to_vrf %s : !fetch.stream<sub, [128], [8], f32> -> !rngd.vrf<[128, 8], f32>
  %t = fetch.fetch %b : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  %w = rngd.to_vrf %t : !fetch.stream<main, [64], [32], bf16> -> !rngd.vrf<[64, 32], bf16>
  %u = fetch.fetch %c : memref<16x32xi8> -> !fetch.stream<main, [16], [32], i8>
  // expected-error @+1 {{'rngd.to_vrf' op crosses the VRF budget: the kernel's VRF tensors hold 8704 bytes per slice (%v !rngd.vrf<[128, 8], f32> 4096 bytes, %w !rngd.vrf<[64, 32], bf16> 4096 bytes, %x !rngd.vrf<[16, 32], i8> 512 bytes), more than the 8192 bytes of one slice's VRF}}
  %x = rngd.to_vrf %u : !fetch.stream<main, [16], [32], i8> -> !rngd.vrf<[16, 32], i8>
  func.return %v, %w, %x : !rngd.vrf<[128, 8], f32>, !rngd.vrf<[64, 32], bf16>, !rngd.vrf<[16, 32], i8>
}

// -----

// One tensor alone over the budget; 4-bit elements count half a byte.
func.func @alone(%a: memref<16384xf4E2M1FN>, %b: memref<4097x2xf32>) -> (!rngd.vrf<[512, 32], f4E2M1FN>, !rngd.vrf<[4097, 2], f32>) {
  %s = fetch.fetch %a {map = affine_map<(t, e) -> (t * 32 + e)>} : memref<16384xf4E2M1FN> -> !fetch.stream<main, [512], [32], f4E2M1FN>
  %v = rngd.to_vrf %s : !fetch.stream<main, [512], [32], f4E2M1FN> -> !rngd.vrf<[512, 32], f4E2M1FN>
  %t = fetch.fetch %b : memref<4097x2xf32> -> !fetch.stream<main, [4097], [2], f32>
  // expected-error @+1 {{the kernel's VRF tensors hold 40968 bytes per slice (%v !rngd.vrf<[512, 32], f4E2M1FN> 8192 bytes, %w !rngd.vrf<[4097, 2], f32> 32776 bytes), more than the 8192 bytes of one slice's VRF; the VRF tensors before it leave 0 bytes for its 32776}}
  %w = rngd.to_vrf %t : !fetch.stream<main, [4097], [2], f32> -> !rngd.vrf<[4097, 2], f32>
  func.return %v, %w : !rngd.vrf<[512, 32], f4E2M1FN>, !rngd.vrf<[4097, 2], f32>
}

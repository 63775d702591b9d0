// Round trip of every `rngd` op (switch, collect, commit, to_trf, to_vrf,
// transpose, contract_outer, block_scale with a stream or a VRF tensor,
// tensor_scale, cast, scratch), custom and generic.
//
// RUN: %fetchc -p '' --emit=mlir %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | FileCheck %s --check-prefix=GENERIC
// RUN: %fetchc -p '' --emit=mlir %s > %t.custom
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir > %t.via-generic
// RUN: diff %t.custom %t.via-generic

// CHECK-LABEL: func.func @engines(
// CHECK-NEXT: %q = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
// CHECK-NEXT: %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
// CHECK-NEXT: %sw = rngd.switch %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
// CHECK-NEXT: %co = rngd.collect %sw : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
// CHECK-NEXT: %acc = rngd.contract_outer %co, %trf : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
// CHECK-NEXT: rngd.commit %acc, %out : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
// CHECK-NEXT: %f = fetch.fetch %y : memref<64x16xf32> -> !fetch.stream<main, [64], [16], f32>
// CHECK-NEXT: %t = rngd.transpose %f : !fetch.stream<main, [64], [16], f32> -> !fetch.stream<main, [16], [64], f32>
// CHECK-NEXT: %v = rngd.to_vrf %t : !fetch.stream<main, [16], [64], f32> -> !rngd.vrf<[16, 64], f32>
// CHECK-NEXT: %k = fetch.fetch %w : memref<32x8xf8E4M3FN> -> !fetch.stream<sub, [32], [8], f8E4M3FN>
// CHECK-NEXT: %r = rngd.to_trf %k : !fetch.stream<sub, [32], [8], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
// GENERIC-LABEL: "func.func"() <{sym_name = "engines"
// GENERIC: %sw = "rngd.switch"(%z) : (!fetch.stream<main, [64], [32], i9>) -> !fetch.stream<main, [64], [32], i9>
// GENERIC-NEXT: %co = "rngd.collect"(%sw) : (!fetch.stream<main, [64], [32], i9>) -> !fetch.stream<main, [64], [32], i9>
// GENERIC-NEXT: %acc = "rngd.contract_outer"(%co, %trf) : (!fetch.stream<main, [64], [32], i9>, !rngd.trf<i8>) -> !fetch.stream<main, [64], [32], i32>
// GENERIC-NEXT: "rngd.commit"(%acc, %out) : (!fetch.stream<main, [64], [32], i32>, memref<64x32xi32>) -> ()
// GENERIC: %t = "rngd.transpose"(%f) : (!fetch.stream<main, [64], [16], f32>) -> !fetch.stream<main, [16], [64], f32>
// GENERIC-NEXT: %v = "rngd.to_vrf"(%t) : (!fetch.stream<main, [16], [64], f32>) -> !rngd.vrf<[16, 64], f32>
// GENERIC: %r = "rngd.to_trf"(%k) : (!fetch.stream<sub, [32], [8], f8E4M3FN>) -> !rngd.trf<f8E4M3FN>
func.func @engines(%x: memref<64x32xi8>, %trf: !rngd.trf<i8>, %out: memref<64x32xi32>,
                   %y: memref<64x16xf32>, %w: memref<32x8xf8E4M3FN>) -> (!rngd.vrf<[16, 64], f32>, !rngd.trf<f8E4M3FN>) {
  %q = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %sw = rngd.switch %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  %co = rngd.collect %sw : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  %acc = rngd.contract_outer %co, %trf : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %acc, %out : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %f = fetch.fetch %y : memref<64x16xf32> -> !fetch.stream<main, [64], [16], f32>
  %t = rngd.transpose %f : !fetch.stream<main, [64], [16], f32> -> !fetch.stream<main, [16], [64], f32>
  %v = rngd.to_vrf %t : !fetch.stream<main, [16], [64], f32> -> !rngd.vrf<[16, 64], f32>
  %k = fetch.fetch %w : memref<32x8xf8E4M3FN> -> !fetch.stream<sub, [32], [8], f8E4M3FN>
  %r = rngd.to_trf %k : !fetch.stream<sub, [32], [8], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %v, %r : !rngd.vrf<[16, 64], f32>, !rngd.trf<f8E4M3FN>
}

// The staged form of the split: scales through the sub Fetch Unit into the
// VRF, block_scale reading the VRF, the Cast Engine's narrowing to bf16.
// CHECK-LABEL: func.func @staged(
// CHECK: %v = rngd.to_vrf %k : !fetch.stream<sub, [8], [8], f32> -> !rngd.vrf<[8, 8], f32>
// CHECK: %b = rngd.block_scale %x, %v {block = 16 : i64} : !fetch.stream<main, [64], [16], f32>, !rngd.vrf<[8, 8], f32> -> !fetch.stream<main, [64], [16], f32>
// CHECK-NEXT: %n = rngd.cast %b : !fetch.stream<main, [64], [16], f32> -> !fetch.stream<main, [64], [16], bf16>
// CHECK-NEXT: rngd.commit %n, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
// GENERIC-LABEL: "func.func"() <{sym_name = "staged"
// GENERIC: %v = "rngd.to_vrf"(%k) : (!fetch.stream<sub, [8], [8], f32>) -> !rngd.vrf<[8, 8], f32>
// GENERIC: %b = "rngd.block_scale"(%x, %v) <{block = 16 : i64}> : (!fetch.stream<main, [64], [16], f32>, !rngd.vrf<[8, 8], f32>) -> !fetch.stream<main, [64], [16], f32>
// GENERIC-NEXT: %n = "rngd.cast"(%b) : (!fetch.stream<main, [64], [16], f32>) -> !fetch.stream<main, [64], [16], bf16>
func.func @staged(%v0: memref<64x16xf32>, %sc: memref<64xf8E4M3FN>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %sc {map = affine_map<(t, e) -> (t * 8 + e)>} : memref<64xf8E4M3FN> -> !fetch.stream<sub, [8], [8], f8E4M3FN>
  %f = fetch.cast %s : !fetch.stream<sub, [8], [8], f8E4M3FN> -> !fetch.stream<sub, [8], [8], f32>
  %k = rngd.collect %f : !fetch.stream<sub, [8], [8], f32> -> !fetch.stream<sub, [8], [8], f32>
  %v = rngd.to_vrf %k : !fetch.stream<sub, [8], [8], f32> -> !rngd.vrf<[8, 8], f32>
  %x = fetch.fetch %v0 : memref<64x16xf32> -> !fetch.stream<main, [64], [16], f32>
  %b = rngd.block_scale %x, %v {block = 16 : i64} : !fetch.stream<main, [64], [16], f32>, !rngd.vrf<[8, 8], f32> -> !fetch.stream<main, [64], [16], f32>
  %n = rngd.cast %b : !fetch.stream<main, [64], [16], f32> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// The Vector Engine ops that fetch-split-scaling produces.
// CHECK-LABEL: func.func @vector_engine(
// CHECK: %b = rngd.block_scale %x, %s {block = 16 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [2], f32> -> !fetch.stream<main, [64], [32], f32>
// CHECK-NEXT: %g = rngd.tensor_scale %b, %gs : !fetch.stream<main, [64], [32], f32>, f32 -> !fetch.stream<main, [64], [32], f32>
// CHECK: %m = rngd.block_scale %y, %e {block = 32 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [1], f8E8M0FNU> -> !fetch.stream<main, [64], [32], f32>
// GENERIC-LABEL: "func.func"() <{sym_name = "vector_engine"
// GENERIC: %b = "rngd.block_scale"(%x, %s) <{block = 16 : i64}> : (!fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [2], f32>) -> !fetch.stream<main, [64], [32], f32>
// GENERIC-NEXT: %g = "rngd.tensor_scale"(%b, %gs) : (!fetch.stream<main, [64], [32], f32>, f32) -> !fetch.stream<main, [64], [32], f32>
func.func @vector_engine(%v: memref<64x32xf32>, %sc: memref<64x2xf32>, %gs: f32, %v2: memref<64x32xf32>, %ex: memref<64x1xf8E8M0FNU>,
                         %o: memref<64x32xf32>, %o2: memref<64x32xf32>) {
  %x = fetch.fetch %v : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  %s = fetch.fetch %sc : memref<64x2xf32> -> !fetch.stream<main, [64], [2], f32>
  %b = rngd.block_scale %x, %s {block = 16 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [2], f32> -> !fetch.stream<main, [64], [32], f32>
  %g = rngd.tensor_scale %b, %gs : !fetch.stream<main, [64], [32], f32>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %g, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  %y = fetch.fetch %v2 : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  %e = fetch.fetch %ex : memref<64x1xf8E8M0FNU> -> !fetch.stream<main, [64], [1], f8E8M0FNU>
  %m = rngd.block_scale %y, %e {block = 32 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [1], f8E8M0FNU> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %m, %o2 : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// A scratch buffer (fetch-route-sub-decode's), unplaced and placed.
// CHECK-LABEL: func.func @scratch(
// CHECK-NEXT: %b = rngd.scratch : memref<4x16xi8>
// CHECK-NEXT: %p = rngd.scratch {dm_base = 128 : i64} : memref<2x8xf8E4M3FN>
// GENERIC-LABEL: "func.func"() <{sym_name = "scratch"
// GENERIC: %b = "rngd.scratch"() : () -> memref<4x16xi8>
// GENERIC-NEXT: %p = "rngd.scratch"() <{dm_base = 128 : i64}> : () -> memref<2x8xf8E4M3FN>
func.func @scratch(%a: memref<4x16xi8>, %c: memref<2x8xf8E4M3FN>) {
  %b = rngd.scratch : memref<4x16xi8>
  %p = rngd.scratch {dm_base = 128 : i64} : memref<2x8xf8E4M3FN>
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %b : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  %t = fetch.fetch %c : memref<2x8xf8E4M3FN> -> !fetch.stream<main, [2], [8], f8E4M3FN>
  rngd.commit %t, %p : !fetch.stream<main, [2], [8], f8E4M3FN>, memref<2x8xf8E4M3FN>
  func.return
}

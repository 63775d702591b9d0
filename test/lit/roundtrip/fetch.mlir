// Round trip of every `fetch` op in the custom form, and through the generic
// form: custom -> custom is stable, and --print-op-generic output re-parses to
// the same IR (its custom printing is identical).
//
// RUN: %fetchc -p '' --emit=mlir %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | FileCheck %s --check-prefix=GENERIC
// RUN: %fetchc -p '' --emit=mlir %s > %t.custom
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir > %t.via-generic
// RUN: diff %t.custom %t.via-generic
// RUN: %fetchc -p '' --emit=mlir %t.custom | diff %t.custom -

// CHECK-LABEL: func.func @fetch_and_stages(
// CHECK-NEXT: %s = fetch.fetch %w {base = 393216 : i64, map = affine_map<(d0, d1) -> (d0, d1)>} : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
// CHECK-NEXT: %d = fetch.table_lookup %s : !fetch.stream<main, [4096], [16], f4E2M1FN> -> !fetch.stream<main, [4096], [16], f8E4M3FN>
// CHECK-NEXT: %f = fetch.cast %d : !fetch.stream<main, [4096], [16], f8E4M3FN> -> !fetch.stream<main, [4096], [16], f32>
// CHECK-NEXT: rngd.commit %f, %o : !fetch.stream<main, [4096], [16], f32>, memref<4096x16xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "fetch_and_stages"
// GENERIC: %s = "fetch.fetch"(%w) <{base = 393216 : i64, map = affine_map<(d0, d1) -> (d0, d1)>}> : (memref<4096x16xf4E2M1FN>) -> !fetch.stream<main, [4096], [16], f4E2M1FN>
// GENERIC-NEXT: %d = "fetch.table_lookup"(%s) : (!fetch.stream<main, [4096], [16], f4E2M1FN>) -> !fetch.stream<main, [4096], [16], f8E4M3FN>
// GENERIC-NEXT: %f = "fetch.cast"(%d) : (!fetch.stream<main, [4096], [16], f8E4M3FN>) -> !fetch.stream<main, [4096], [16], f32>
func.func @fetch_and_stages(%w: memref<4096x16xf4E2M1FN>, %o: memref<4096x16xf32>) {
  %s = fetch.fetch %w {base = 393216 : i64, map = affine_map<(t0, p0) -> (t0, p0)>} : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
  %d = fetch.table_lookup %s : !fetch.stream<main, [4096], [16], f4E2M1FN> -> !fetch.stream<main, [4096], [16], f8E4M3FN>
  %f = fetch.cast %d : !fetch.stream<main, [4096], [16], f8E4M3FN> -> !fetch.stream<main, [4096], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [4096], [16], f32>, memref<4096x16xf32>
  func.return
}

// The optional properties: no map (identity default), no base, read_size, a
// strided memref, a non-identity map with constants, the sub context.
// CHECK-LABEL: func.func @fetch_properties(
// CHECK-NEXT: %a = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
// CHECK-NEXT: %b = fetch.fetch %x {read_size = 8 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
// CHECK-NEXT: %c = fetch.fetch %y {base = 1024 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 32) + d2))>} : memref<8x512xbf16> -> !fetch.stream<main, [8, 16], [32], bf16>
// CHECK-NEXT: %e = fetch.fetch %z : memref<16x8xi8, strided<[16, 1], offset: 8>> -> !fetch.stream<sub, [16], [8], i8>
// GENERIC-LABEL: "func.func"() <{sym_name = "fetch_properties"
// GENERIC: %a = "fetch.fetch"(%x) : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
// GENERIC-NEXT: %b = "fetch.fetch"(%x) <{read_size = 8 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
func.func @fetch_properties(%x: memref<64x32xi8>, %y: memref<8x512xbf16>, %z: memref<16x8xi8, strided<[16, 1], offset: 8>>,
                            %o1: memref<64x32xi8>, %o2: memref<64x32xi8>, %o3: memref<8x512xbf16>, %o4: memref<16x8xi8>) {
  %a = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %b = fetch.fetch %x {read_size = 8 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %c = fetch.fetch %y {base = 1024 : i64, map = affine_map<(a, b, p) -> (a, b * 32 + p)>} : memref<8x512xbf16> -> !fetch.stream<main, [8, 16], [32], bf16>
  %e = fetch.fetch %z : memref<16x8xi8, strided<[16, 1], offset: 8>> -> !fetch.stream<sub, [16], [8], i8>
  rngd.commit %a, %o1 : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  rngd.commit %b, %o2 : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  rngd.commit %c, %o3 : !fetch.stream<main, [8, 16], [32], bf16>, memref<8x512xbf16>
  rngd.commit %e, %o4 : !fetch.stream<sub, [16], [8], i8>, memref<16x8xi8>
  func.return
}

// CHECK-LABEL: func.func @zp_and_convert(
// CHECK-NEXT: %q = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
// CHECK-NEXT: %r = fetch.zp_sub %q, -128 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
// CHECK-NEXT: %n = fetch.fetch %y : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
// CHECK-NEXT: %m = fetch.zp_sub %n, 7 {tag = "kept"} : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
// CHECK-NEXT: %a = fetch.fetch %z : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
// CHECK-NEXT: %b = fetch.convert %a : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [64], [16], bf16>
// GENERIC-LABEL: "func.func"() <{sym_name = "zp_and_convert"
// GENERIC: %r = "fetch.zp_sub"(%q) <{zero_point = -128 : i32}> : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i9>
// GENERIC: %m = "fetch.zp_sub"(%n) <{zero_point = 7 : i32}> {tag = "kept"} : (!fetch.stream<main, [64], [32], i4>) -> !fetch.stream<main, [64], [32], i5>
// GENERIC: %b = "fetch.convert"(%a) : (!fetch.stream<main, [64], [16], f8E5M2>) -> !fetch.stream<main, [64], [16], bf16>
func.func @zp_and_convert(%x: memref<64x32xi8>, %y: memref<64x32xi4>, %z: memref<64x16xf8E5M2>,
                          %t8: !rngd.trf<i8>, %t4: !rngd.trf<i4>, %acc: memref<64x32xi32>, %acc4: memref<64x32xi32>, %o: memref<64x16xbf16>) {
  %q = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %r = fetch.zp_sub %q, -128 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %n = fetch.fetch %y : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %m = fetch.zp_sub %n, 7 {tag = "kept"} : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %a = fetch.fetch %z : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  %b = fetch.convert %a : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [64], [16], bf16>
  %c1 = rngd.contract_outer %r, %t8 : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  %c2 = rngd.contract_outer %m, %t4 : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %c1, %acc : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  rngd.commit %c2, %acc4 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  rngd.commit %b, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// CHECK-LABEL: func.func @dequant(
// CHECK-NEXT: %s = fetch.fetch %w : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
// CHECK-NEXT: %nv = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [4096], [16], f4E2M1FN>, memref<4096x1xf8E4M3FN>, f32 -> !fetch.stream<main, [4096], [16], f32>
// CHECK-NEXT: %m = fetch.fetch %w2 : memref<4096x32xf4E2M1FN> -> !fetch.stream<main, [4096], [32], f4E2M1FN>
// CHECK-NEXT: %mx = fetch.dequant %m, %ms {format = "mxfp4"} : !fetch.stream<main, [4096], [32], f4E2M1FN>, memref<4096x1xf8E8M0FNU> -> !fetch.stream<main, [4096], [32], f32>
// GENERIC-LABEL: "func.func"() <{sym_name = "dequant"
// GENERIC: %nv = "fetch.dequant"(%s, %bs, %g) <{format = "nvfp4"}> : (!fetch.stream<main, [4096], [16], f4E2M1FN>, memref<4096x1xf8E4M3FN>, f32) -> !fetch.stream<main, [4096], [16], f32>
// GENERIC: %mx = "fetch.dequant"(%m, %ms) <{format = "mxfp4"}> : (!fetch.stream<main, [4096], [32], f4E2M1FN>, memref<4096x1xf8E8M0FNU>) -> !fetch.stream<main, [4096], [32], f32>
func.func @dequant(%w: memref<4096x16xf4E2M1FN>, %bs: memref<4096x1xf8E4M3FN>, %g: f32,
                   %w2: memref<4096x32xf4E2M1FN>, %ms: memref<4096x1xf8E8M0FNU>,
                   %o: memref<4096x16xf32>, %o2: memref<4096x32xf32>) {
  %s = fetch.fetch %w : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
  %nv = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [4096], [16], f4E2M1FN>, memref<4096x1xf8E4M3FN>, f32 -> !fetch.stream<main, [4096], [16], f32>
  %m = fetch.fetch %w2 : memref<4096x32xf4E2M1FN> -> !fetch.stream<main, [4096], [32], f4E2M1FN>
  %mx = fetch.dequant %m, %ms {format = "mxfp4"} : !fetch.stream<main, [4096], [32], f4E2M1FN>, memref<4096x1xf8E8M0FNU> -> !fetch.stream<main, [4096], [32], f32>
  rngd.commit %nv, %o : !fetch.stream<main, [4096], [16], f32>, memref<4096x16xf32>
  rngd.commit %mx, %o2 : !fetch.stream<main, [4096], [32], f32>, memref<4096x32xf32>
  func.return
}

// Every legal fetch.convert chain of ir.md §4 / hardware.md §2.1-2.2, and the
// identity, after fetch-legalize-convert alone.
// RUN: %fetchc %s -p fetch-legalize-convert --emit=mlir | FileCheck %s
// RUN: %fetchc %s -p fetch-legalize-convert --emit=mlir | FileCheck %s --check-prefix=NOCONV

// NOCONV-NOT: fetch.convert

// CHECK-LABEL: func.func @f4_to_f8e4m3(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.table_lookup %[[S]] : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E4M3FN>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], f8E4M3FN>, memref<32xf8E4M3FN>
func.func @f4_to_f8e4m3(%arg0: memref<32xf4E2M1FN>, %arg1: memref<32xf8E4M3FN>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf4E2M1FN> -> !fetch.stream<main, [4], [8], f4E2M1FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E4M3FN>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f8E4M3FN>, memref<32xf8E4M3FN>
  func.return
}

// CHECK-LABEL: func.func @f4_to_f8e5m2(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.table_lookup %[[S]] : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E5M2>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], f8E5M2>, memref<32xf8E5M2>
func.func @f4_to_f8e5m2(%arg0: memref<32xf4E2M1FN>, %arg1: memref<32xf8E5M2>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf4E2M1FN> -> !fetch.stream<main, [4], [8], f4E2M1FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E5M2>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f8E5M2>, memref<32xf8E5M2>
  func.return
}

// CHECK-LABEL: func.func @f8e4m3_to_bf16(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.table_lookup %[[S]] : !fetch.stream<main, [4], [8], f8E4M3FN> -> !fetch.stream<main, [4], [8], bf16>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
func.func @f8e4m3_to_bf16(%arg0: memref<32xf8E4M3FN>, %arg1: memref<32xbf16>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf8E4M3FN> -> !fetch.stream<main, [4], [8], f8E4M3FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f8E4M3FN> -> !fetch.stream<main, [4], [8], bf16>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
  func.return
}

// CHECK-LABEL: func.func @f8e5m2_to_bf16(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.table_lookup %[[S]] : !fetch.stream<main, [4], [8], f8E5M2> -> !fetch.stream<main, [4], [8], bf16>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
func.func @f8e5m2_to_bf16(%arg0: memref<32xf8E5M2>, %arg1: memref<32xbf16>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf8E5M2> -> !fetch.stream<main, [4], [8], f8E5M2>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f8E5M2> -> !fetch.stream<main, [4], [8], bf16>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
  func.return
}

// CHECK-LABEL: func.func @i4_to_i32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], i4> -> !fetch.stream<main, [4], [8], i32>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
func.func @i4_to_i32(%arg0: memref<32xi4>, %arg1: memref<32xi32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xi4> -> !fetch.stream<main, [4], [8], i4>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], i4> -> !fetch.stream<main, [4], [8], i32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
  func.return
}

// CHECK-LABEL: func.func @i8_to_i32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], i8> -> !fetch.stream<main, [4], [8], i32>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
func.func @i8_to_i32(%arg0: memref<32xi8>, %arg1: memref<32xi32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xi8> -> !fetch.stream<main, [4], [8], i8>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], i8> -> !fetch.stream<main, [4], [8], i32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
  func.return
}

// CHECK-LABEL: func.func @i16_to_i32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], i16> -> !fetch.stream<main, [4], [8], i32>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
func.func @i16_to_i32(%arg0: memref<32xi16>, %arg1: memref<32xi32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xi16> -> !fetch.stream<main, [4], [8], i16>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], i16> -> !fetch.stream<main, [4], [8], i32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
  func.return
}

// CHECK-LABEL: func.func @f8e4m3_to_f32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], f8E4M3FN> -> !fetch.stream<main, [4], [8], f32>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
func.func @f8e4m3_to_f32(%arg0: memref<32xf8E4M3FN>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf8E4M3FN> -> !fetch.stream<main, [4], [8], f8E4M3FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f8E4M3FN> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}

// CHECK-LABEL: func.func @f8e5m2_to_f32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], f8E5M2> -> !fetch.stream<main, [4], [8], f32>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
func.func @f8e5m2_to_f32(%arg0: memref<32xf8E5M2>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf8E5M2> -> !fetch.stream<main, [4], [8], f8E5M2>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f8E5M2> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}

// CHECK-LABEL: func.func @bf16_to_f32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], bf16> -> !fetch.stream<main, [4], [8], f32>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
func.func @bf16_to_f32(%arg0: memref<32xbf16>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xbf16> -> !fetch.stream<main, [4], [8], bf16>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], bf16> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}

// CHECK-LABEL: func.func @f32_to_bf16(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.cast %[[S]] : !fetch.stream<main, [4], [8], f32> -> !fetch.stream<main, [4], [8], bf16>
// CHECK-NEXT:    rngd.commit %[[V0]], %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
func.func @f32_to_bf16(%arg0: memref<32xf32>, %arg1: memref<32xbf16>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf32> -> !fetch.stream<main, [4], [8], f32>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f32> -> !fetch.stream<main, [4], [8], bf16>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
  func.return
}

// CHECK-LABEL: func.func @f4_to_f32(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[V0:.*]] = fetch.table_lookup %[[S]] : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E4M3FN>
// CHECK-NEXT:    %[[V1:.*]] = fetch.cast %[[V0]] : !fetch.stream<main, [4], [8], f8E4M3FN> -> !fetch.stream<main, [4], [8], f32>
// CHECK-NEXT:    rngd.commit %[[V1]], %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
func.func @f4_to_f32(%arg0: memref<32xf4E2M1FN>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf4E2M1FN> -> !fetch.stream<main, [4], [8], f4E2M1FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}
// Identity: the convert disappears, the stream goes straight to its consumer.
// CHECK-LABEL: func.func @identity(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    rngd.commit %[[S]], %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
func.func @identity(%arg0: memref<32xbf16>, %arg1: memref<32xbf16>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xbf16> -> !fetch.stream<main, [4], [8], bf16>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], bf16> -> !fetch.stream<main, [4], [8], bf16>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], bf16>, memref<32xbf16>
  func.return
}

// An identity convert in front of a zero-point stage keeps that stage.
// CHECK-LABEL: func.func @identity_then_zp(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[Z:.*]] = fetch.zp_sub %[[S]], 5 : !fetch.stream<main, [4], [8], i8> -> !fetch.stream<main, [4], [8], i9>
// CHECK-NEXT:    %{{.*}} = rngd.contract_outer %[[Z]], %arg1
func.func @identity_then_zp(%arg0: memref<32xi8>, %arg1: !rngd.trf<i8>, %arg2: memref<32xi32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xi8> -> !fetch.stream<main, [4], [8], i8>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], i8> -> !fetch.stream<main, [4], [8], i8>
  %z = fetch.zp_sub %c, 5 : !fetch.stream<main, [4], [8], i8> -> !fetch.stream<main, [4], [8], i9>
  %y = rngd.contract_outer %z, %arg1 : !fetch.stream<main, [4], [8], i9>, !rngd.trf<i8> -> !fetch.stream<main, [4], [8], i32>
  rngd.commit %y, %arg2 : !fetch.stream<main, [4], [8], i32>, memref<32xi32>
  func.return
}

// A convert next to explicit stages: lookup (from the convert) then an
// explicit cast; an explicit lookup then a convert that becomes the cast;
// two converts in a row (each legalised, in order).
// CHECK-LABEL: func.func @convert_then_cast(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[S]] : {{.*}}f4E2M1FN> -> {{.*}}f8E5M2>
// CHECK-NEXT:    %[[C:.*]] = fetch.cast %[[L]] : {{.*}}f8E5M2> -> {{.*}}f32>
// CHECK-NEXT:    rngd.commit %[[C]]
func.func @convert_then_cast(%arg0: memref<32xf4E2M1FN>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf4E2M1FN> -> !fetch.stream<main, [4], [8], f4E2M1FN>
  %c = fetch.convert %s : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E5M2>
  %f = fetch.cast %c : !fetch.stream<main, [4], [8], f8E5M2> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %f, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}

// CHECK-LABEL: func.func @lookup_then_convert(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[S]] : {{.*}}f4E2M1FN> -> {{.*}}f8E4M3FN>
// CHECK-NEXT:    %[[C:.*]] = fetch.cast %[[L]] : {{.*}}f8E4M3FN> -> {{.*}}f32>
// CHECK-NEXT:    rngd.commit %[[C]]
func.func @lookup_then_convert(%arg0: memref<32xf4E2M1FN>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf4E2M1FN> -> !fetch.stream<main, [4], [8], f4E2M1FN>
  %l = fetch.table_lookup %s : !fetch.stream<main, [4], [8], f4E2M1FN> -> !fetch.stream<main, [4], [8], f8E4M3FN>
  %c = fetch.convert %l : !fetch.stream<main, [4], [8], f8E4M3FN> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}

// CHECK-LABEL: func.func @two_converts(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[L:.*]] = fetch.table_lookup %[[S]] : {{.*}}f8E5M2> -> {{.*}}bf16>
// CHECK-NEXT:    %[[C:.*]] = fetch.cast %[[L]] : {{.*}}bf16> -> {{.*}}f32>
// CHECK-NEXT:    rngd.commit %[[C]]
func.func @two_converts(%arg0: memref<32xf8E5M2>, %arg1: memref<32xf32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xf8E5M2> -> !fetch.stream<main, [4], [8], f8E5M2>
  %b = fetch.convert %s : !fetch.stream<main, [4], [8], f8E5M2> -> !fetch.stream<main, [4], [8], bf16>
  %c = fetch.convert %b : !fetch.stream<main, [4], [8], bf16> -> !fetch.stream<main, [4], [8], f32>
  rngd.commit %c, %arg1 : !fetch.stream<main, [4], [8], f32>, memref<32xf32>
  func.return
}

// A cast-only convert is legal on the sub context.
// CHECK-LABEL: func.func @sub_cast(
// CHECK-NEXT:    %[[S:.*]] = fetch.fetch %arg0
// CHECK-NEXT:    %[[C:.*]] = fetch.cast %[[S]] : !fetch.stream<sub, [4], [8], i8> -> !fetch.stream<sub, [4], [8], i32>
func.func @sub_cast(%arg0: memref<32xi8>, %arg1: memref<32xi32>) {
  %s = fetch.fetch %arg0 {base = 4096 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<32xi8> -> !fetch.stream<sub, [4], [8], i8>
  %c = fetch.convert %s : !fetch.stream<sub, [4], [8], i8> -> !fetch.stream<sub, [4], [8], i32>
  rngd.commit %c, %arg1 : !fetch.stream<sub, [4], [8], i32>, memref<32xi32>
  func.return
}

// fetch.fetch's own checks (ir.md §1-2): what it may read, its map, its
// properties.  Errors are at the op's first result.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: an explicit linear map with constants and strides, and the identity default.
func.func @maps(%a: memref<8x512xbf16>, %b: memref<64x16xi8>, %o1: memref<8x512xbf16>, %o2: memref<64x16xi8>) {
  %s = fetch.fetch %a {map = affine_map<(a, b, p) -> (a, b * 32 + p)>} : memref<8x512xbf16> -> !fetch.stream<main, [8, 16], [32], bf16>
  rngd.commit %s, %o1 : !fetch.stream<main, [8, 16], [32], bf16>, memref<8x512xbf16>
  %t = fetch.fetch %b : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %t, %o2 : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @f16_memref(%a: memref<64x16xf16>, %o: memref<64x16xf16>) {
  // expected-error @+1 {{'fetch.fetch' op cannot read a memref of f16: the Fetch Unit reads i4, i8, i16, i32, f4E2M1FN, f8E4M3FN, f8E5M2, bf16, f32, f8E8M0FNU}}
  %s = fetch.fetch %a : memref<64x16xf16> -> !fetch.stream<main, [64], [16], f16>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], f16>, memref<64x16xf16>
  func.return
}

// -----

func.func @unsigned_memref(%a: memref<64x16xui8>, %o: memref<64x16xui8>) {
  // expected-error @+1 {{'fetch.fetch' op cannot read a memref of ui8: the Fetch Unit reads i4, i8}}
  %s = fetch.fetch %a : memref<64x16xui8> -> !fetch.stream<main, [64], [16], ui8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], ui8>, memref<64x16xui8>
  func.return
}

// -----

func.func @i5_memref(%a: memref<64x16xi5>, %t: !rngd.trf<i4>, %o: memref<64x16xi32>) {
  // expected-error @+1 {{'fetch.fetch' op cannot read a memref of i5: i5 exists only in flight, produced by fetch.zp_sub for rngd.contract_outer}}
  %s = fetch.fetch %a : memref<64x16xi5> -> !fetch.stream<main, [64], [16], i5>
  %r = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [16], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [16], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [16], i32>, memref<64x16xi32>
  func.return
}

// -----

func.func @i9_memref(%a: memref<64x16xi9>, %t: !rngd.trf<i8>, %o: memref<64x16xi32>) {
  // expected-error @+1 {{'fetch.fetch' op cannot read a memref of i9: i9 exists only in flight}}
  %s = fetch.fetch %a : memref<64x16xi9> -> !fetch.stream<main, [64], [16], i9>
  %r = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [16], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [16], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [16], i32>, memref<64x16xi32>
  func.return
}

// -----

func.func @floordiv_map(%a: memref<32x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op 'map' must be linear (no mod, floordiv, ceildiv): 'floordiv' is not linear}}
  %s = fetch.fetch %a {map = affine_map<(t, p) -> (t floordiv 2, p)>} : memref<32x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @mod_map(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op 'map' must be linear (no mod, floordiv, ceildiv): 'mod' is not linear}}
  %s = fetch.fetch %a {map = affine_map<(t, p) -> (t, p mod 16)>} : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @ceildiv_map(%a: memref<32x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'ceildiv' is not linear}}
  %s = fetch.fetch %a {map = affine_map<(t, p) -> (t ceildiv 2, p)>} : memref<32x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @symbol_map(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op 'map' must be linear (no mod, floordiv, ceildiv): symbols are not supported}}
  %s = fetch.fetch %a {map = affine_map<(t, p)[s0] -> (t + s0, p)>} : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @missing_map(%a: memref<1024xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op needs a 'map' property: the stream has 2 dims (time then packet) but the memref has rank 1, so the default identity map does not apply}}
  %s = fetch.fetch %a : memref<1024xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @map_dims(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op 'map' has 1 dim but the stream has 2 (time [64] then packet [16])}}
  %s = fetch.fetch %a {map = affine_map<(t) -> (t, t)>} : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @map_results(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op 'map' has 1 result but the memref has rank 2}}
  %s = fetch.fetch %a {map = affine_map<(t, p) -> (t * 16 + p)>} : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @dynamic_memref(%a: memref<?x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op dynamic memref shapes are not supported: DM tensors have static shapes}}
  %s = fetch.fetch %a : memref<?x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @read_size_zero(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op 'read_size' must be a positive number of elements, got 0}}
  %s = fetch.fetch %a {read_size = 0 : i64} : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @dequant_format(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op unknown format "int4": fetch.dequant decodes "nvfp4" or "mxfp4"}}
  %d = fetch.dequant %s, %bs, %g {format = "int4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @nvfp4_without_tensor_scale(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op nvfp4 needs the f32 tensor scale as its third operand}}
  %d = fetch.dequant %s, %bs {format = "nvfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @mxfp4_with_tensor_scale(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x1xf8E8M0FNU>, %g: f32, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op mxfp4 has no tensor scale: drop the third operand}}
  %d = fetch.dequant %s, %bs, %g {format = "mxfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E8M0FNU>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @mxfp4_scale_type(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x1xf8E4M3FN>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op mxfp4 block scales are f8E8M0FNU, but the scale memref holds f8E4M3FN}}
  %d = fetch.dequant %s, %bs {format = "mxfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E4M3FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @dequant_codes_type(%w: memref<64x32xi4>, %bs: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-error @+1 {{'fetch.dequant' op decodes f4E2M1FN codes, but its input stream holds i4}}
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [64], [32], i4>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// ir.md §3 rule 1: fetch.table_lookup accepts exactly the four pairs of
// hardware.md §2.1, fetch.cast exactly the seven of §2.2, fetch.zp_sub exactly
// i4 -> i5 and i8 -> i9.  An illegal pair lists the legal outputs for its input
// and, for f8 -> bf16 / f4 -> ..., points at fetch.table_lookup (or fetch.convert).
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: every legal lookup pair.
func.func @lookups(%a: memref<64x16xf4E2M1FN>, %b: memref<64x16xf4E2M1FN>, %c: memref<64x16xf8E4M3FN>, %d: memref<64x16xf8E5M2>,
                   %oa: memref<64x16xf8E4M3FN>, %ob: memref<64x16xf8E5M2>, %oc: memref<64x16xbf16>, %od: memref<64x16xbf16>) {
  %sa = fetch.fetch %a : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %la = fetch.table_lookup %sa : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  rngd.commit %la, %oa : !fetch.stream<main, [64], [16], f8E4M3FN>, memref<64x16xf8E4M3FN>
  %sb = fetch.fetch %b : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %lb = fetch.table_lookup %sb : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E5M2>
  rngd.commit %lb, %ob : !fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xf8E5M2>
  %sc = fetch.fetch %c : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  %lc = fetch.table_lookup %sc : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %lc, %oc : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  %sd = fetch.fetch %d : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  %ld = fetch.table_lookup %sd : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %ld, %od : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// -----

// Valid: every legal cast pair (codes 0-6).
func.func @casts(%i4: memref<64x8xi4>, %i8: memref<64x8xi8>, %i16: memref<64x8xi16>, %e4: memref<64x8xf8E4M3FN>,
                 %e5: memref<64x8xf8E5M2>, %bf: memref<64x8xbf16>, %f: memref<64x8xf32>,
                 %o0: memref<64x8xi32>, %o1: memref<64x8xi32>, %o2: memref<64x8xi32>, %o3: memref<64x8xf32>,
                 %o4: memref<64x8xf32>, %o5: memref<64x8xf32>, %o6: memref<64x8xbf16>) {
  %s0 = fetch.fetch %i4 : memref<64x8xi4> -> !fetch.stream<main, [64], [8], i4>
  %c0 = fetch.cast %s0 : !fetch.stream<main, [64], [8], i4> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %c0, %o0 : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  %s1 = fetch.fetch %i8 : memref<64x8xi8> -> !fetch.stream<main, [64], [8], i8>
  %c1 = fetch.cast %s1 : !fetch.stream<main, [64], [8], i8> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %c1, %o1 : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  %s2 = fetch.fetch %i16 : memref<64x8xi16> -> !fetch.stream<main, [64], [8], i16>
  %c2 = fetch.cast %s2 : !fetch.stream<main, [64], [8], i16> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %c2, %o2 : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  %s3 = fetch.fetch %e4 : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  %c3 = fetch.cast %s3 : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c3, %o3 : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  %s4 = fetch.fetch %e5 : memref<64x8xf8E5M2> -> !fetch.stream<main, [64], [8], f8E5M2>
  %c4 = fetch.cast %s4 : !fetch.stream<main, [64], [8], f8E5M2> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c4, %o4 : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  %s5 = fetch.fetch %bf : memref<64x8xbf16> -> !fetch.stream<main, [64], [8], bf16>
  %c5 = fetch.cast %s5 : !fetch.stream<main, [64], [8], bf16> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c5, %o5 : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  %s6 = fetch.fetch %f : memref<64x8xf32> -> !fetch.stream<main, [64], [8], f32>
  %c6 = fetch.cast %s6 : !fetch.stream<main, [64], [8], f32> -> !fetch.stream<main, [64], [8], bf16>
  rngd.commit %c6, %o6 : !fetch.stream<main, [64], [8], bf16>, memref<64x8xbf16>
  func.return
}

// -----

// Valid: both zero-point forms.
func.func @zero_points(%a: memref<64x32xi4>, %b: memref<64x32xi8>, %t4: !rngd.trf<i4>, %t8: !rngd.trf<i8>,
                       %oa: memref<64x32xi32>, %ob: memref<64x32xi32>) {
  %sa = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %za = fetch.zp_sub %sa, 1 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %ca = rngd.contract_outer %za, %t4 : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %ca, %oa : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %sb = fetch.fetch %b : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %zb = fetch.zp_sub %sb, 1 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %cb = rngd.contract_outer %zb, %t8 : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %cb, %ob : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// The README's example: there is no f8 -> bf16 cast; the non-paired table does it.
func.func @cast_f8_to_bf16(%a: memref<64x16xf8E4M3FN>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.cast' op the hardware has no f8E4M3FN -> bf16 cast; casts from f8E4M3FN: f32; f8E4M3FN -> bf16 is done by the non-paired fetch.table_lookup (or fetch.convert, which legalises to it)}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// -----

func.func @cast_f8e5_to_bf16(%a: memref<64x16xf8E5M2>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %a : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  // expected-error @+1 {{no f8E5M2 -> bf16 cast; casts from f8E5M2: f32; f8E5M2 -> bf16 is done by the non-paired fetch.table_lookup (or fetch.convert}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// -----

// f4 -> f32 takes two stages: the message spells them out.
func.func @cast_f4_to_f32(%a: memref<64x16xf4E2M1FN>, %o: memref<64x16xf32>) {
  %s = fetch.fetch %a : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.cast' op the hardware has no f4E2M1FN -> f32 cast; the cast stage reads i4, i8, i16, f8E4M3FN, f8E5M2, bf16, f32; for f4E2M1FN -> f32 use fetch.table_lookup to f8E4M3FN, then fetch.cast to f32 (or fetch.convert, which legalises to that)}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// -----

func.func @cast_f4_to_f8(%a: memref<64x16xf4E2M1FN>, %o: memref<64x16xf8E5M2>) {
  %s = fetch.fetch %a : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-error @+1 {{no f4E2M1FN -> f8E5M2 cast; the cast stage reads i4, i8, i16, f8E4M3FN, f8E5M2, bf16, f32; f4E2M1FN -> f8E5M2 is done by the paired fetch.table_lookup}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E5M2>
  rngd.commit %c, %o : !fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xf8E5M2>
  func.return
}

// -----

// No f32 -> 8-bit float cast: narrow later, in the Cast Engine.
func.func @cast_f32_to_f8(%a: memref<64x8xf32>, %o: memref<64x8xf8E4M3FN>) {
  %s = fetch.fetch %a : memref<64x8xf32> -> !fetch.stream<main, [64], [8], f32>
  // expected-error @+1 {{'fetch.cast' op the hardware has no f32 -> f8E4M3FN cast; casts from f32: bf16; instead, narrow f32 to an 8-bit float later, in the Cast Engine}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [8], f32> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], f8E4M3FN>, memref<64x8xf8E4M3FN>
  func.return
}

// -----

// MXFP4 exponents are decoded in the Vector Engine, not by a cast.
func.func @cast_e8m0(%a: memref<64x8xf8E8M0FNU>, %o: memref<64x8xf32>) {
  %s = fetch.fetch %a : memref<64x8xf8E8M0FNU> -> !fetch.stream<main, [64], [8], f8E8M0FNU>
  // expected-error @+1 {{no f8E8M0FNU -> f32 cast; the cast stage reads i4, i8, i16, f8E4M3FN, f8E5M2, bf16, f32; instead, fetch the raw f8E8M0FNU codes and decode 2^(e-127) in the Vector Engine}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [8], f8E8M0FNU> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  func.return
}

// -----

// i9 comes only from fetch.zp_sub.
func.func @cast_to_i9(%a: memref<64x8xi8>, %t: !rngd.trf<i8>, %o: memref<64x8xi32>) {
  %s = fetch.fetch %a : memref<64x8xi8> -> !fetch.stream<main, [64], [8], i8>
  // expected-error @+1 {{'fetch.cast' op the hardware has no i8 -> i9 cast; casts from i8: i32; i9 is produced only by fetch.zp_sub}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [8], i8> -> !fetch.stream<main, [64], [8], i9>
  %r = rngd.contract_outer %c, %t : !fetch.stream<main, [64], [8], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  func.return
}

// -----

// A cast the hardware does not have at all, between two hardware types.
func.func @cast_i8_to_f32(%a: memref<64x8xi8>, %o: memref<64x8xf32>) {
  %s = fetch.fetch %a : memref<64x8xi8> -> !fetch.stream<main, [64], [8], i8>
  // expected-error @+1 {{'fetch.cast' op the hardware has no i8 -> f32 cast; casts from i8: i32}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [8], i8> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  func.return
}

// -----

// A cast to a type the hardware does not have.
func.func @cast_to_f16(%a: memref<64x8xbf16>, %o: memref<64x8xf16>) {
  %s = fetch.fetch %a : memref<64x8xbf16> -> !fetch.stream<main, [64], [8], bf16>
  // expected-error @+1 {{'fetch.cast' op the hardware has no bf16 -> f16 cast; casts from bf16: f32}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [8], bf16> -> !fetch.stream<main, [64], [8], f16>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], f16>, memref<64x8xf16>
  func.return
}

// -----

// A lookup that is really a cast.
func.func @lookup_is_a_cast(%a: memref<64x8xi8>, %o: memref<64x8xi32>) {
  %s = fetch.fetch %a : memref<64x8xi8> -> !fetch.stream<main, [64], [8], i8>
  // expected-error @+1 {{'fetch.table_lookup' op has no i8 -> i32 table; there is no decode table keyed by i8 (tables exist for f4E2M1FN -> f8E4M3FN/f8E5M2, paired, and f8E4M3FN/f8E5M2 -> bf16); i8 -> i32 is a type cast: use fetch.cast}}
  %c = fetch.table_lookup %s : !fetch.stream<main, [64], [8], i8> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  func.return
}

// -----

// f4 -> f32 is not one table: lookup then cast.
func.func @lookup_f4_to_f32(%a: memref<64x8xf4E2M1FN>, %o: memref<64x8xf32>) {
  %s = fetch.fetch %a : memref<64x8xf4E2M1FN> -> !fetch.stream<main, [64], [8], f4E2M1FN>
  // expected-error @+1 {{'fetch.table_lookup' op has no f4E2M1FN -> f32 table; the f4E2M1FN table decodes to: f8E4M3FN, f8E5M2; for f4E2M1FN -> f32 use fetch.table_lookup to f8E4M3FN, then fetch.cast to f32}}
  %c = fetch.table_lookup %s : !fetch.stream<main, [64], [8], f4E2M1FN> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  func.return
}

// -----

func.func @lookup_f8_to_f32(%a: memref<64x8xf8E5M2>, %o: memref<64x8xf32>) {
  %s = fetch.fetch %a : memref<64x8xf8E5M2> -> !fetch.stream<main, [64], [8], f8E5M2>
  // expected-error @+1 {{'fetch.table_lookup' op has no f8E5M2 -> f32 table; the f8E5M2 table decodes to: bf16; f8E5M2 -> f32 is a type cast: use fetch.cast}}
  %c = fetch.table_lookup %s : !fetch.stream<main, [64], [8], f8E5M2> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  func.return
}

// -----

func.func @zp_i8_to_i5(%a: memref<64x8xi8>, %t: !rngd.trf<i4>, %o: memref<64x8xi32>) {
  %s = fetch.fetch %a : memref<64x8xi8> -> !fetch.stream<main, [64], [8], i8>
  // expected-error @+1 {{'fetch.zp_sub' op has no i8 -> i5 form: zero-point subtraction widens i8 to i9}}
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [8], i8> -> !fetch.stream<main, [64], [8], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [8], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  func.return
}

// -----

func.func @zp_i16(%a: memref<64x8xi16>, %o: memref<64x8xi32>) {
  %s = fetch.fetch %a : memref<64x8xi16> -> !fetch.stream<main, [64], [8], i16>
  // expected-error @+1 {{'fetch.zp_sub' op has no i16 -> i32 form: zero-point subtraction widens only i4 -> i5 and i8 -> i9}}
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [8], i16> -> !fetch.stream<main, [64], [8], i32>
  rngd.commit %z, %o : !fetch.stream<main, [64], [8], i32>, memref<64x8xi32>
  func.return
}

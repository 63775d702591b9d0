// ir.md §3 rule 5: along one stream, table lookup, then cast, then zero-point
// subtraction, each at most once, all directly after fetch.fetch and before
// any rngd op.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: lookup then cast (the f4 -> f32 decode), and a single zp_sub.
func.func @lookup_then_cast(%w: memref<64x16xf4E2M1FN>, %o: memref<64x16xf32>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.table_lookup %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  %f = fetch.cast %d : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// -----

func.func @two_lookups(%w: memref<64x16xf4E2M1FN>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-note @+1 {{the table lookup is here}}
  %d = fetch.table_lookup %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.table_lookup' op a second table lookup is not possible: the Fetch Adapter runs masking, then table lookup, then type cast, then zero-point subtraction, each at most once, directly after fetch.fetch and before any rngd op}}
  %b = fetch.table_lookup %d : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// -----

func.func @two_casts(%a: memref<64x8xf8E4M3FN>, %o: memref<64x8xbf16>) {
  %s = fetch.fetch %a : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-note @+1 {{the type cast is here}}
  %f = fetch.cast %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f32>
  // expected-error @+1 {{'fetch.cast' op a second type cast is not possible: the Fetch Adapter runs masking, then table lookup, then type cast, then zero-point subtraction, each at most once}}
  %b = fetch.cast %f : !fetch.stream<main, [64], [8], f32> -> !fetch.stream<main, [64], [8], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [64], [8], bf16>, memref<64x8xbf16>
  func.return
}

// -----

// Cast then lookup: no cast produces a table key type, so rule 1 (checked
// first) already rejects the lookup and names the legal way.
func.func @cast_then_lookup(%a: memref<64x8xbf16>, %o: memref<64x8xbf16>) {
  %s = fetch.fetch %a : memref<64x8xbf16> -> !fetch.stream<main, [64], [8], bf16>
  %f = fetch.cast %s : !fetch.stream<main, [64], [8], bf16> -> !fetch.stream<main, [64], [8], f32>
  // expected-error @+1 {{'fetch.table_lookup' op has no f32 -> bf16 table; there is no decode table keyed by f32 (tables exist for f4E2M1FN -> f8E4M3FN/f8E5M2, paired, and f8E4M3FN/f8E5M2 -> bf16); f32 -> bf16 is a type cast: use fetch.cast}}
  %b = fetch.table_lookup %f : !fetch.stream<main, [64], [8], f32> -> !fetch.stream<main, [64], [8], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [64], [8], bf16>, memref<64x8xbf16>
  func.return
}

// -----

// Zero-point subtraction then cast: likewise rule 1 reports it, and says why.
func.func @zp_then_cast(%a: memref<64x32xi8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'fetch.cast' op the hardware has no i9 -> i32 cast; the cast stage reads i4, i8, i16, f8E4M3FN, f8E5M2, bf16, f32; i9 comes out of fetch.zp_sub, the adapter's last stage, and its only consumer is rngd.contract_outer}}
  %c = fetch.cast %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @zp_then_lookup(%a: memref<64x32xi8>, %o: memref<64x32xbf16>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'fetch.table_lookup' op has no i9 -> bf16 table; there is no decode table keyed by i9 (tables exist for f4E2M1FN -> f8E4M3FN/f8E5M2, paired, and f8E4M3FN/f8E5M2 -> bf16); i9 comes out of fetch.zp_sub, the adapter's last stage}}
  %b = fetch.table_lookup %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

// -----

// An adapter stage after an rngd op.
func.func @cast_after_switch(%a: memref<64x8xf8E4M3FN>, %o: memref<64x8xf32>) {
  %s = fetch.fetch %a : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-note @+1 {{the input is produced here}}
  %w = rngd.switch %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-error @+1 {{'fetch.cast' op its input comes from 'rngd.switch', not from the Fetch Adapter: the Fetch Adapter runs masking, then table lookup, then type cast, then zero-point subtraction, each at most once, directly after fetch.fetch and before any rngd op; move this stage before the 'rngd.switch'}}
  %f = fetch.cast %w : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %f, %o : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  func.return
}

// -----

func.func @zp_after_collect(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the input is produced here}}
  %c = rngd.collect %q : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op its input comes from 'rngd.collect', not from the Fetch Adapter}}
  %z = fetch.zp_sub %c, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @lookup_after_transpose(%w: memref<64x16xf4E2M1FN>, %o: memref<16x64xf8E4M3FN>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-note @+1 {{the input is produced here}}
  %t = rngd.transpose %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [16], [64], f4E2M1FN>
  // expected-error @+1 {{'fetch.table_lookup' op its input comes from 'rngd.transpose', not from the Fetch Adapter}}
  %d = fetch.table_lookup %t : !fetch.stream<main, [16], [64], f4E2M1FN> -> !fetch.stream<main, [16], [64], f8E4M3FN>
  rngd.commit %d, %o : !fetch.stream<main, [16], [64], f8E4M3FN>, memref<16x64xf8E4M3FN>
  func.return
}

// -----

// fetch.convert runs in the adapter too.
func.func @convert_after_switch(%a: memref<64x8xf8E4M3FN>, %o: memref<64x8xbf16>) {
  %s = fetch.fetch %a : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-note @+1 {{the input is produced here}}
  %w = rngd.switch %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-error @+1 {{'fetch.convert' op its input comes from 'rngd.switch': a conversion runs in the Fetch Adapter, directly after fetch.fetch or another adapter stage and before any rngd op}}
  %b = fetch.convert %w : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [64], [8], bf16>, memref<64x8xbf16>
  func.return
}

// -----

// fetch.dequant owns all the adapter stages: its codes come straight from fetch.fetch.
func.func @dequant_after_lookup(%w: memref<64x16xf4E2M1FN>, %bs: memref<64x1xf8E4M3FN>, %g: f32, %o: memref<64x16xf32>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-note @+1 {{the codes are produced here}}
  %w2 = rngd.switch %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op its codes must come straight from fetch.fetch (the decode owns all adapter stages)}}
  %d = fetch.dequant %w2, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [64], [16], f4E2M1FN>, memref<64x1xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  func.return
}

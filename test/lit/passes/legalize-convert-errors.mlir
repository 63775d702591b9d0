// fetch-legalize-convert rejects conversions the Fetch Adapter cannot do,
// at the fetch.convert, saying what the adapter offers and the route.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-legalize-convert
// RUN: not %fetchc %s --split-input-file -p fetch-legalize-convert --emit=mlir 2>&1 | FileCheck %s

// f16 is not a hardware type: rejected as a conversion target.
// CHECK: legalize-convert-errors.mlir:[[# @LINE + 4]]:8: error: 'fetch.convert' op cannot be legalised: f16 is not a Fetch Adapter type; from bf16 the Fetch Adapter offers f32 (type cast)
func.func @to_f16(%b: memref<64xbf16>, %o: memref<64xf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xbf16> -> !fetch.stream<main, [2], [32], bf16>
  // expected-error @+1 {{'fetch.convert' op cannot be legalised: f16 is not a Fetch Adapter type; from bf16 the Fetch Adapter offers f32 (type cast)}}
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], bf16> -> !fetch.stream<main, [2], [32], f16>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], f16>, memref<64xf16>
  func.return
}

// -----

// f16 cannot even be read: fetch.fetch rejects it before any pass runs.
func.func @from_f16(%b: memref<64xf16>, %o: memref<64xf32>) {
  // expected-error @+1 {{'fetch.fetch' op cannot read a memref of f16}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf16> -> !fetch.stream<main, [2], [32], f16>
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], f16> -> !fetch.stream<main, [2], [32], f32>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], f32>, memref<64xf32>
  func.return
}

// -----

// No f32 -> 8-bit float in the adapter: narrow in the Cast Engine.
// CHECK: error: 'fetch.convert' op cannot be legalised: the Fetch Adapter cannot convert f32 to f8E4M3FN: from f32 the Fetch Adapter offers bf16 (type cast); instead, narrow f32 to an 8-bit float later, in the Cast Engine
func.func @f32_to_f8(%b: memref<64xf32>, %o: memref<64xf8E4M3FN>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 8 + p)>} : memref<64xf32> -> !fetch.stream<main, [8], [8], f32>
  // expected-error @+1 {{cannot convert f32 to f8E4M3FN: from f32 the Fetch Adapter offers bf16 (type cast); instead, narrow f32 to an 8-bit float later, in the Cast Engine}}
  %c = fetch.convert %s : !fetch.stream<main, [8], [8], f32> -> !fetch.stream<main, [8], [8], f8E4M3FN>
  rngd.commit %c, %o : !fetch.stream<main, [8], [8], f8E4M3FN>, memref<64xf8E4M3FN>
  func.return
}

// -----

// e2m1 -> bf16: no table and no cast; two routes.
// CHECK: error: 'fetch.convert' op cannot be legalised: the Fetch Adapter cannot convert f4E2M1FN to bf16: from f4E2M1FN the Fetch Adapter offers f8E4M3FN (table lookup), f8E5M2 (table lookup), f32 (table lookup + type cast); instead, convert to f32 here and narrow to bf16 in the Cast Engine, or decode to f8E4M3FN, commit it to DM and fetch it again through the non-paired table
func.func @f4_to_bf16(%b: memref<64xf4E2M1FN>, %o: memref<64xbf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf4E2M1FN> -> !fetch.stream<main, [2], [32], f4E2M1FN>
  // expected-error @+1 {{cannot convert f4E2M1FN to bf16: from f4E2M1FN the Fetch Adapter offers f8E4M3FN (table lookup), f8E5M2 (table lookup), f32 (table lookup + type cast); instead, convert to f32 here and narrow to bf16 in the Cast Engine, or decode to f8E4M3FN, commit it to DM and fetch it again through the non-paired table}}
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], f4E2M1FN> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], bf16>, memref<64xbf16>
  func.return
}

// -----

// The convert becomes a second cast on a stream that already has one.
func.func @second_cast(%b: memref<64xf8E4M3FN>, %o: memref<64xbf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 8 + p)>} : memref<64xf8E4M3FN> -> !fetch.stream<main, [8], [8], f8E4M3FN>
  // expected-note @+1 {{this type cast is on the same stream}}
  %c = fetch.cast %s : !fetch.stream<main, [8], [8], f8E4M3FN> -> !fetch.stream<main, [8], [8], f32>
  // expected-error @+1 {{'fetch.convert' op legalises f32 -> bf16 to type cast, which breaks the adapter's stage order together with the stages around it: the Fetch Adapter runs table lookup, then type cast, then zero-point subtraction, each at most once}}
  %d = fetch.convert %c : !fetch.stream<main, [8], [8], f32> -> !fetch.stream<main, [8], [8], bf16>
  rngd.commit %d, %o : !fetch.stream<main, [8], [8], bf16>, memref<64xbf16>
  func.return
}

// -----

// The convert becomes a lookup in front of an explicit lookup.
func.func @lookup_before_lookup(%b: memref<64xf4E2M1FN>, %o: memref<64xbf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf4E2M1FN> -> !fetch.stream<main, [2], [32], f4E2M1FN>
  // expected-error @+1 {{legalises f4E2M1FN -> f8E4M3FN to table lookup, which breaks the adapter's stage order}}
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], f4E2M1FN> -> !fetch.stream<main, [2], [32], f8E4M3FN>
  // expected-note @+1 {{this table lookup is on the same stream}}
  %d = fetch.table_lookup %c : !fetch.stream<main, [2], [32], f8E4M3FN> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %d, %o : !fetch.stream<main, [2], [32], bf16>, memref<64xbf16>
  func.return
}

// -----

// The convert becomes a lookup after a cast.
func.func @lookup_after_cast(%b: memref<64xf32>, %o: memref<64xf32>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 8 + p)>} : memref<64xf32> -> !fetch.stream<main, [8], [8], f32>
  // expected-note @+1 {{this type cast is on the same stream}}
  %c = fetch.cast %s : !fetch.stream<main, [8], [8], f32> -> !fetch.stream<main, [8], [8], bf16>
  // expected-error @+1 {{legalises bf16 -> f32 to type cast, which breaks the adapter's stage order}}
  %d = fetch.convert %c : !fetch.stream<main, [8], [8], bf16> -> !fetch.stream<main, [8], [8], f32>
  rngd.commit %d, %o : !fetch.stream<main, [8], [8], f32>, memref<64xf32>
  func.return
}

// -----

// A lookup on the sub context: no table register; the route is decode on
// main, commit, then a convert-only StoTrf.
// CHECK: error: 'fetch.convert' op needs a table lookup for f8E4M3FN -> bf16, but the stream is on the sub Fetch Unit, which has no table-lookup register; decode on the main context, commit the result to DM with rngd.commit, then stage it with a convert-only StoTrf fetch on the sub context
func.func @sub_lookup(%b: memref<64xf8E4M3FN>, %o: memref<64xbf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf8E4M3FN> -> !fetch.stream<sub, [2], [32], f8E4M3FN>
  // expected-error @+1 {{'fetch.convert' op needs a table lookup for f8E4M3FN -> bf16, but the stream is on the sub Fetch Unit, which has no table-lookup register; decode on the main context, commit the result to DM with rngd.commit, then stage it with a convert-only StoTrf fetch on the sub context}}
  %c = fetch.convert %s : !fetch.stream<sub, [2], [32], f8E4M3FN> -> !fetch.stream<sub, [2], [32], bf16>
  rngd.commit %c, %o : !fetch.stream<sub, [2], [32], bf16>, memref<64xbf16>
  func.return
}

// -----

// e2m1 -> f8E4M3FN on sub needs the (paired) table too.
func.func @sub_f4_to_f8(%b: memref<64xf4E2M1FN>, %o: memref<64xf8E4M3FN>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 16 + p)>} : memref<64xf4E2M1FN> -> !fetch.stream<sub, [4], [16], f4E2M1FN>
  // expected-error @+1 {{needs a table lookup for f4E2M1FN -> f8E4M3FN}}
  %c = fetch.convert %s : !fetch.stream<sub, [4], [16], f4E2M1FN> -> !fetch.stream<sub, [4], [16], f8E4M3FN>
  rngd.commit %c, %o : !fetch.stream<sub, [4], [16], f8E4M3FN>, memref<64xf8E4M3FN>
  func.return
}

// -----

// fetch.convert never produces i5/i9: that is fetch.zp_sub.
func.func @to_i9(%b: memref<64xi8>, %t: !rngd.trf<i8>, %o: memref<64xi32>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  // expected-error @+1 {{fetch.convert never produces i9: the zero-point stage is the only way, use fetch.zp_sub}}
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], i8> -> !fetch.stream<main, [2], [32], i9>
  %y = rngd.contract_outer %c, %t : !fetch.stream<main, [2], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

// f4E2M1FN -> f32 on sub: the convert's missing table register is the error;
// the fetch does not also report the flit limit of the cast it would imply.
func.func @f4_to_f32_on_sub(%a: memref<64x16xf4E2M1FN>, %o: memref<64x16xf32>) {
  %s = fetch.fetch %a : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.convert' op needs a table lookup for f4E2M1FN -> f32, but the stream is on the sub Fetch Unit, which has no table-lookup register}}
  %c = fetch.convert %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f32>
  rngd.commit %c, %o : !fetch.stream<sub, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// ir.md §3: "One op gets one error: the first rule it breaks, in this order."
// Each op below breaks two or more rules; only the first is reported.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// fetch.cast f8 -> bf16 (rule 1) that also changes the shape (rule 7) and is
// never used (rule 6): rule 1 only.
func.func @rule1_beats_6_and_7(%a: memref<64x16xf8E4M3FN>) {
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.cast' op the hardware has no f8E4M3FN -> bf16 cast}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [16], [64], bf16>
  func.return
}

// -----

// An illegal pair on the sub context: rule 1 before rule 2.
func.func @rule1_beats_2(%a: memref<64x8xi8>, %o: memref<64x8xi32>) {
  %s = fetch.fetch %a : memref<64x8xi8> -> !fetch.stream<sub, [64], [8], i8>
  // expected-error @+1 {{'fetch.table_lookup' op has no i8 -> i32 table}}
  %c = fetch.table_lookup %s : !fetch.stream<sub, [64], [8], i8> -> !fetch.stream<sub, [64], [8], i32>
  rngd.commit %c, %o : !fetch.stream<sub, [64], [8], i32>, memref<64x8xi32>
  func.return
}

// -----

// A legal lookup on sub after another lookup, used twice: rule 2 only.
func.func @rule2_beats_5_and_6(%w: memref<64x16xf4E2M1FN>, %o1: memref<64x16xbf16>, %o2: memref<64x16xbf16>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.table_lookup' op runs on the sub Fetch Unit, which has no table-lookup register}}
  %d = fetch.table_lookup %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.table_lookup' op runs on the sub Fetch Unit, which has no table-lookup register}}
  %b = fetch.table_lookup %d : !fetch.stream<sub, [64], [16], f8E4M3FN> -> !fetch.stream<sub, [64], [16], bf16>
  rngd.commit %b, %o1 : !fetch.stream<sub, [64], [16], bf16>, memref<64x16xbf16>
  rngd.commit %b, %o2 : !fetch.stream<sub, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// -----

// An out-of-range zero point (rule 4) on a zp_sub that follows an rngd op
// (rule 5) and changes the shape (rule 7): rule 4 only.  The i9 reaching
// rngd.commit is its own op's rule-3 error.
func.func @rule4_beats_5_and_7(%a: memref<64x32xi8>, %o: memref<64x32xi16>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %w = rngd.switch %q : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+2 {{'fetch.zp_sub' op zero point 200 is outside the i8 range [-128, 127]}}
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %w, 200 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [32], [64], i9>
  // expected-error @+1 {{'rngd.commit' op cannot commit an i9 stream to memory}}
  rngd.commit %z, %o : !fetch.stream<main, [32], [64], i9>, memref<64x32xi16>
  func.return
}

// -----

// An i9 returned from the function (rule 3, at the producer) with an
// out-of-range zero point (rule 4): rule 3 first.
func.func @rule3_beats_4(%a: memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i9> {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op its result stream of i9 reaches 'func.return'}}
  %z = fetch.zp_sub %q, 500 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-note @+1 {{used here}}
  func.return %z : !fetch.stream<main, [64], [32], i9>
}

// -----

// A second cast (rule 5) whose result is never used (rule 6) and changes the
// context (rule 7): rule 5 only.
func.func @rule5_beats_6_and_7(%a: memref<64x8xf8E4M3FN>) {
  %s = fetch.fetch %a : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-note @+1 {{the type cast is here}}
  %f = fetch.cast %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f32>
  // expected-error @+1 {{'fetch.cast' op a second type cast is not possible}}
  %b = fetch.cast %f : !fetch.stream<main, [64], [8], f32> -> !fetch.stream<sub, [64], [8], bf16>
  func.return
}

// -----

// fetch.fetch: element type mismatch (rule 7) on an unused stream (rule 6):
// rule 6 only.  A memref of f16 on an unused stream: the element-type check
// comes first.
func.func @fetch_rule6_beats_7(%a: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is never used}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i16>
  func.return
}

// -----

func.func @fetch_element_type_first(%a: memref<64x16xf16>) {
  // expected-error @+1 {{'fetch.fetch' op cannot read a memref of f16}}
  %s = fetch.fetch %a : memref<64x16xf16> -> !fetch.stream<main, [64], [16], f16>
  func.return
}

// -----

// Rule 7 (element type) before rule 8 (sequencer limits: base not a multiple of 8).
func.func @fetch_rule7_beats_8(%a: memref<64x16xi8>, %o: memref<64x16xi16>) {
  // expected-error @+1 {{'fetch.fetch' op result element type i16 differs from the memref's i8}}
  %s = fetch.fetch %a {base = 3 : i64} : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i16>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i16>, memref<64x16xi16>
  func.return
}

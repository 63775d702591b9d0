// ir.md §3 rule 4: the zero point lies in [-8, 7] for i4 and [-128, 127] for
// i8; both edges of both ranges are valid, one past either edge is an error.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: the edges.
func.func @i4_low(%a: memref<64x32xi4>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %z = fetch.zp_sub %q, -8 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i4_high(%a: memref<64x32xi4>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %z = fetch.zp_sub %q, 7 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i8_low(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, -128 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i8_high(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 127 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i8_zero(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 0 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i4_below(%a: memref<64x32xi4>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-error @+1 {{'fetch.zp_sub' op zero point -9 is outside the i4 range [-8, 7]; an in-range zero point keeps every residual within i5}}
  %z = fetch.zp_sub %q, -9 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i4_above(%a: memref<64x32xi4>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-error @+1 {{'fetch.zp_sub' op zero point 8 is outside the i4 range [-8, 7]}}
  %z = fetch.zp_sub %q, 8 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i8_below(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op zero point -129 is outside the i8 range [-128, 127]; an in-range zero point keeps every residual within i9}}
  %z = fetch.zp_sub %q, -129 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i8_above(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op zero point 128 is outside the i8 range [-128, 127]}}
  %z = fetch.zp_sub %q, 128 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// Far out of range, and in the generic form.
func.func @i8_far(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{zero point -100000 is outside the i8 range [-128, 127]}}
  %z = fetch.zp_sub %q, -100000 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// The generic form carries the same property.
func.func @generic_form(%a: memref<64x32xi4>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-error @+1 {{'fetch.zp_sub' op zero point 15 is outside the i4 range [-8, 7]}}
  %z = "fetch.zp_sub"(%q) <{zero_point = 15 : i32}> : (!fetch.stream<main, [64], [32], i4>) -> !fetch.stream<main, [64], [32], i5>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// A zero point that does not even fit the i32 property is a parse error at the number.
func.func @does_not_fit(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{zero point 99999999999 does not fit the i32 'zero_point' property (it must lie in [-8, 7] for i4, [-128, 127] for i8)}}
  %z = fetch.zp_sub %q, 99999999999 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

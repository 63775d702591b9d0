// Parse errors are located (file:line:col of the offending token, MLIR-style),
// show the source line and a caret, exit 1, and never a Python traceback.
// Each `// -----` chunk is parsed on its own, so every error is reported.
//
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %s 2>&1 | FileCheck %s
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %s 2>&1 | FileCheck %s --check-prefix=NOTB
// NOTB-NOT: {{Traceback|internal error}}
// NOTB: error:
// NOTB-NOT: {{Traceback|internal error}}

// An unknown op: located at its name.
// CHECK: errors.mlir:[[# @LINE + 4]]:8: error: Operation fetch.fetchh is not registered
// CHECK-NEXT: {{^}}  %s = fetch.fetchh %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
// CHECK-NEXT: {{^}}       ^
func.func @unknown_op(%a: memref<64x16xi8>) {
  %s = fetch.fetchh %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8> // expected-error {{Operation fetch.fetchh is not registered}}
  func.return
}

// -----

// ... also in the generic form.
// CHECK: errors.mlir:[[# @LINE + 3]]:8: error: Operation rngd.bogus is not registered
func.func @unknown_generic_op(%a: memref<64x16xi8>) {
  // expected-error @+1 {{Operation rngd.bogus is not registered}}
  %s = "rngd.bogus"(%a) : (memref<64x16xi8>) -> !fetch.stream<main, [64], [16], i8>
  func.return
}

// -----

// An unknown type of the fetch dialect.
// CHECK: errors.mlir:[[# @LINE + 3]]:57: error: 'fetch.strem' is not registered
func.func @bad_type(%a: memref<64x16xi8>) {
  // expected-error @+1 {{'fetch.strem' is not registered}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.strem<main, [64], [16], i8>
  func.return
}

// -----

// A bad element type inside a stream type.
// CHECK: errors.mlir:[[# @LINE + 3]]:77: error: type expected
func.func @bad_element_type(%a: memref<64x16xi8>) {
  // expected-error @+1 {{type expected}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], q8>
  func.return
}

// -----

// A misspelt stream context: located at the context.
// CHECK: errors.mlir:[[# @LINE + 5]]:59: error: !fetch.stream context must be 'main' or 'sub', not 'mian'
// CHECK-NEXT: {{^}}  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<mian, [64], [16], i8>
// CHECK-NEXT: {{^}}                                                          ^
func.func @bad_context(%a: memref<64x16xi8>) {
  // expected-error @+1 {{!fetch.stream context must be 'main' or 'sub', not 'mian'}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<mian, [64], [16], i8>
  func.return
}

// -----

// Stream dimensions: positive, and at least one packet dimension.
// CHECK: errors.mlir:[[# @LINE + 3]]:72: error: !fetch.stream dimensions must be positive, got 0
func.func @zero_dim(%a: memref<64x16xi8>) {
  // expected-error @+1 {{!fetch.stream dimensions must be positive, got 0}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [0], i8>
  func.return
}

// -----

// CHECK: errors.mlir:[[# @LINE + 3]]:71: error: !fetch.stream needs at least one packet dimension (e.g. [1])
func.func @no_packet(%a: memref<64x16xi8>) {
  // expected-error @+1 {{!fetch.stream needs at least one packet dimension (e.g. [1])}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [], i8>
  func.return
}

// -----

// A register-file type without its element type.
// CHECK: errors.mlir:[[# @LINE + 2]]:55: error: type expected
// expected-error @+1 {{type expected}}
func.func @bad_trf(%a: memref<64x16xi8>) -> !rngd.trf<> {
  func.return
}

// -----

// An undefined SSA value: located at its use.
// CHECK: errors.mlir:[[# @LINE + 5]]:15: error: use of undeclared SSA value name %t
// CHECK-NEXT: {{^}}  rngd.commit %t, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
// CHECK-NEXT: {{^}}              ^
func.func @undefined_value(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{use of undeclared SSA value name %t}}
  rngd.commit %t, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

// Custom-form syntax errors point at the token.
// CHECK: errors.mlir:[[# @LINE + 3]]:42: error: Expected '->'
func.func @missing_arrow(%a: memref<64x16xi8>) {
  // expected-error @+1 {{Expected '->'}}
  %s = fetch.fetch %a : memref<64x16xi8> !fetch.stream<main, [64], [16], i8>
  func.return
}

// -----

// CHECK: errors.mlir:[[# @LINE + 3]]:25: error: zero point 99999999999 does not fit the i32 'zero_point' property
func.func @zero_point_too_big(%a: memref<64x32xi8>) {
  // expected-error @+1 {{zero point 99999999999 does not fit the i32 'zero_point' property}}
  %z = fetch.zp_sub %a, 99999999999 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  func.return
}

// -----

// CHECK: errors.mlir:[[# @LINE + 3]]:27: error: 'zero_point' is given after the operand (fetch.zp_sub %s, ZP), not in the attribute dictionary
func.func @zero_point_twice(%a: memref<64x32xi8>) {
  // expected-error @+1 {{'zero_point' is given after the operand}}
  %z = fetch.zp_sub %a, 3 {zero_point = 4 : i32} : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  func.return
}

// -----

// A VRF tensor type gives its shape: the shapeless spelling of fetchc 0.2 is
// an error that names the shaped one.
// CHECK: errors.mlir:[[# @LINE + 3]]:38: error: !rngd.vrf needs its shape: !rngd.vrf<[d0, d1, ...], f32> (the stream rngd.to_vrf stores, its time dims then packet dims)
func.func @shapeless_vrf(%a: memref<64x16xf32>) {
  // expected-error @+1 {{!rngd.vrf needs its shape: !rngd.vrf<[d0, d1, ...], f32>}}
  %s = "test.op"() : () -> !rngd.vrf<f32>
  func.return
}

// -----

// CHECK: errors.mlir:[[# @LINE + 3]]:39: error: !rngd.vrf dimensions must be positive, got 0
func.func @zero_vrf_dim() {
  // expected-error @+1 {{!rngd.vrf dimensions must be positive, got 0}}
  %s = "test.op"() : () -> !rngd.vrf<[0, 8], f32>
  func.return
}

// -----

// Input that ends in the middle of a function: located at its last token.
// CHECK: errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error:
func.func @truncated(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  // expected-error @+1 {{}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>

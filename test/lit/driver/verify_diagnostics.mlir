// --verify-diagnostics (ir.md §5, MLIR semantics): every designator form
// matches, exit 0 exactly when every expected diagnostic appears and no
// unexpected one does, and no output file is written.
//
// RUN: %fetchc --verify-diagnostics --split-input-file -p '' %s -o %t.out
// RUN: not test -e %t.out
// RUN: %fetchc --verify-diagnostics --split-input-file -p '' --emit=mlir %s | %python -c "import sys; sys.exit(bool(sys.stdin.read()))"
// The default pipeline's diagnostics are covered too (here: none beyond the verifier's).
// RUN: %fetchc --verify-diagnostics --split-input-file %s -o %t.bin
// RUN: not test -e %t.bin

// Same line, @+N, @-N.
func.func @offsets(%a: memref<64x32xi8>, %o: memref<64x32xi16>) {
  // expected-note @+2 {{the i9 stream is produced here by zero-point subtraction}}
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  rngd.commit %z, %o : !fetch.stream<main, [64], [32], i9>, memref<64x32xi16> // expected-error {{cannot commit an i9 stream}}
  func.return
}

// -----

func.func @minus(%a: memref<64x32xi8>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @-1 {{'fetch.fetch' op its result stream is never used}}
  func.return
}

// -----

// @above skips designator lines; @below finds the next line that is not one.
func.func @above_below(%a: memref<64x16xi8>, %o1: memref<64x16xi8>, %o2: memref<64x16xi8>) {
  // expected-error @below {{'fetch.fetch' op its result stream has 2 uses}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o1 : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  // expected-note @above {{used here}}
  // expected-note @below {{used here}}
  rngd.commit %s, %o2 : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// -----

// Two expectations on one line; the -re form.
func.func @two_on_one_line(%a: memref<64x16xf16>, %b: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xf16> -> !fetch.stream<main, [64], [16], f16> // expected-error {{cannot read a memref of f16}}
  %t = fetch.fetch %b : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8> // expected-error-re {{its result stream is {{(never|not)}} used: every stream must be consumed exactly {{[a-z]+}}}}
  func.return
}

// -----

// Parse errors are diagnostics like any other.
func.func @parse_error(%a: memref<64x16xi8>) {
  // expected-error @+1 {{!fetch.stream context must be 'main' or 'sub', not 'mian'}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<mian, [64], [16], i8>
  func.return
}

// -----

// A chunk without expectations and without diagnostics passes.
func.func @clean(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

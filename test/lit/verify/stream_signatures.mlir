// RUN: %fetchc %s --split-input-file --verify-diagnostics -p ''

// ir.md §1: a stream may not be a function argument or result, even unused
// or in a declaration (a used one is also reported by its consumer).

// expected-error @+1 {{'func.func' op has a !fetch.stream argument #1, but streams live inside one function}}
func.func @unused_stream_arg(%a: memref<16xi8>, %s: !fetch.stream<main, [1], [16], i8>) {
  func.return
}

// -----

// expected-error @+1 {{'func.func' op has a !fetch.stream result #0, but streams live inside one function: a stream may not be a function argument or result}}
func.func private @decl() -> !fetch.stream<main, [1], [16], i8>

// -----

// A memref argument is fine.
func.func @ok(%a: memref<1x16xi8>, %o: memref<16xi32>) {
  %s = fetch.fetch %a : memref<1x16xi8> -> !fetch.stream<main, [1], [16], i8>
  %c = fetch.cast %s : !fetch.stream<main, [1], [16], i8> -> !fetch.stream<main, [1], [16], i32>
  rngd.commit %c, %o : !fetch.stream<main, [1], [16], i32>, memref<16xi32>
  func.return
}



// i9 comes only from
// the producer (rule 6's place), with a note at the use.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Streams live inside one function (ir.md §1): not returned ...
func.func @returned(%a: memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8> {
  // expected-error @+1 {{'fetch.fetch' op its result stream is returned from the function, but a stream may not be a function result: streams live inside one function; consume it here (e.g. rngd.commit it to a memref argument)}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{used here}}
  func.return %s : !fetch.stream<main, [64], [32], i8>
}


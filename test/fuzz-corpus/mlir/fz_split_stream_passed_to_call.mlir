

// ... not passed to a call ...
func.func private @callee(!fetch.stream<main, [64], [32], i8>)
func.func @passed_to_call(%a: memref<64x32xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is passed to a call, but a stream may not be a function argument: streams live inside one function; pass the memref instead and read it in the callee with fetch.fetch}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{used here}}
  func.call @callee(%s) : (!fetch.stream<main, [64], [32], i8>) -> ()
  func.return
}


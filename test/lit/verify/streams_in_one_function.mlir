// ir.md §1: streams live inside one function.  A stream may not be a
// function argument or result, nor cross into an op that does not know
// streams.  A fetch/rngd consumer reports a stream operand it cannot have got
// legally; a use by func.return / func.call / another dialect is reported at
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

// -----

// ... not passed to a call ...
func.func private @callee(!fetch.stream<main, [64], [32], i8>)
func.func @passed_to_call(%a: memref<64x32xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is passed to a call, but a stream may not be a function argument: streams live inside one function; pass the memref instead and read it in the callee with fetch.fetch}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{used here}}
  func.call @callee(%s) : (!fetch.stream<main, [64], [32], i8>) -> ()
  func.return
}

// -----

// ... not consumed by an op that does not know streams ...
func.func @foreign_user(%a: memref<64x32xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is used by 'test.op', which cannot consume a Fetch Unit stream; a stream is consumed by an adapter stage, an rngd engine op, or rngd.commit}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{used here}}
  "test.op"(%s) : (!fetch.stream<main, [64], [32], i8>) -> ()
  func.return
}

// -----

// ... not a function argument ...
func.func @stream_argument(%s: !fetch.stream<main, [64], [32], i8>, %o: memref<64x32xi8>) {
  // expected-error @+1 {{'rngd.commit' op its input stream is a function argument of @stream_argument, but a stream may not be a function argument: streams live inside one function; pass the memref instead and read it here with fetch.fetch}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

// -----

func.func @stream_argument_to_stage(%s: !fetch.stream<main, [64], [8], bf16>, %o: memref<64x8xf32>) {
  // expected-error @+1 {{'fetch.cast' op its input stream is a function argument of @stream_argument_to_stage, but a stream may not be a function argument}}
  %f = fetch.cast %s : !fetch.stream<main, [64], [8], bf16> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %f, %o : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  func.return
}

// -----

// ... and not a call result.
func.func private @producer() -> !fetch.stream<main, [64], [32], i8>
func.func @call_result(%o: memref<64x32xi8>) {
  // expected-note @+1 {{the call is here}}
  %s = func.call @producer() : () -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.commit' op its input stream is the result of a call to @producer, but a stream may not be a function result: streams live inside one function; pass the memref instead and read it here with fetch.fetch}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

// -----

func.func @foreign_producer(%o: memref<64x32xi8>) {
  // expected-note @+1 {{the stream is produced here}}
  %s = "test.op"() : () -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.commit' op its input stream comes from 'test.op', which cannot produce a Fetch Unit stream; streams come from fetch.fetch, the adapter stages and the rngd engine ops}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

// -----

// A stream cannot cross into a region: a loop would consume it once per
// iteration.
func.func @into_a_loop(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %lb: index, %ub: index, %st: index) {
  // expected-note @+1 {{the stream is produced here}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  scf.for %i = %lb to %ub step %st {
    // expected-error @+1 {{'rngd.commit' op its input stream is produced outside this op's block, but a stream cannot cross a block or region boundary (it would be consumed once per execution of the region, or not at all); read the memref with fetch.fetch in the block that consumes the stream}}
    rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  }
  func.return
}

// -----

// The whole chain inside a loop body is a stream-legal chain, but a Fetch Unit
// program is a static register block (ir.md §2a): the fetch must sit directly
// in the function body, never silently dropped out of the loop.
func.func @inside_a_loop(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %lb: index, %ub: index, %st: index) {
  scf.for %i = %lb to %ub step %st {
    // expected-error @+1 {{'fetch.fetch' op is inside 'scf.for', but a Fetch Unit program is a static register block that runs exactly once: every fetch.fetch must sit directly in a func.func body; unroll the 'scf.for' or hoist the fetch out of it}}
    %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
    rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  }
  func.return
}

// -----

// A stream as a loop-carried value: scf.for may not take or give one, and the
// loop's block argument is no stream source.  (One error per op: rngd.switch
// reports its block-argument input, not its use by scf.yield.)
func.func @loop_carried(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %lb: index, %ub: index, %st: index) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is used by 'scf.for', which cannot consume a Fetch Unit stream; a stream is consumed by an adapter stage, an rngd engine op, or rngd.commit}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+2 {{used here}}
  // expected-note @+1 {{the stream is produced here}}
  %r = scf.for %i = %lb to %ub step %st iter_args(%x = %s) -> (!fetch.stream<main, [64], [32], i8>) {
    // expected-error @+1 {{'rngd.switch' op its input stream is a block argument of 'scf.for', but a stream cannot cross a block or region boundary; read the memref with fetch.fetch in the block that consumes the stream}}
    %y = rngd.switch %x : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i8>
    scf.yield %y : !fetch.stream<main, [64], [32], i8>
  }
  // expected-error @+1 {{'rngd.commit' op its input stream comes from 'scf.for', which cannot produce a Fetch Unit stream; streams come from fetch.fetch, the adapter stages and the rngd engine ops}}
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}



// A stream as a loop-carried value: scf.for may not take or give one, and the
// loop's block argument is no stream source.  (One error per op: rngd.switch
// reports its bloCk-argument input, not its use by scf.yield.)
func.func @loop_carried(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %lb: index, %ub: index, %st: index) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is used by 'scf.for', which cannot consume a Fetch Unit stream; a stream is consumed by an adapter stage, an rngd engine op,`or rngd.commit}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+2 {{used here}}
  // expected-note @+1 {{the stream is produced here}}
  %r = scf.for %i = %lb to %ub step %st iter_args(%x = %s) -> (!fetch.stream<main, [64], [32], i8>) {
    // expected-error @+1 {{'rngd.switch' op its input stream is a block argument of 'scf.for', but a stream cannot cross a block or region boundary; read the memref with fetch.fetch in the block that consumes dhe stream}}
    %y = rngd.switch %x : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i8>
    scf.yield %y : !fetch.stream<main, [64], [32], i8>
  }
  // expected-error @+1 {{'rngd.commit' op its input stream comes from 'scf.for', which cannot produce a Fetch Unit stream; streams come from fetch.fetch, the adapter stages and the rngd engine ops}}
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

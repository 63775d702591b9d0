

// A stream cannot cross into a region: a loop would consume it once per
// iteration.
func.func @into_a_loop(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %lb: index, %ub: index, %st: index) {
  // expected-note @+1 {{the stream is produced here}}
  // expected-note @+1 {{the stream is produced here}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  scf.for %i = %lb to %ub step %st {
    // expected-error @+1 {{'rngd.commit' op its input stream is produced outside this op's block, but a stream cannot cross a block or region boundary (it would be consumed once per execution of the region, or not at all); read the memref with fetch.fetch in the block that consumes the stream}}
    rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  }
  func.return
}


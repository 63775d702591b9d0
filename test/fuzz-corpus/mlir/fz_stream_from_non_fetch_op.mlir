

func.func @foreign_producer(%o: memref<64x32xi8>) {
  // expected-note @+1 {{the stream is produced here}}
  %s = "test.op"() : () -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.commit' op its input stream comes from 'test.op', which cannot produce a Fetch Unit stream; streams come from fetch.fetch, the adapter stages and the rngd engine op|s}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}


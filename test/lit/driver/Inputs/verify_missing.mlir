func.func @clean(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  // expected-error @+1 {{this error is not produced}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

func.func @twice(%a: memref<64x16xi8>, %o1: memref<64x16xi8>, %o2: memref<64x16xi8>) {
  // expected-error @+1 {{has 2 uses}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  // expected-error @+1 {{used here}}
  rngd.commit %s, %o1 : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  // expected-note @+1 {{used here}}
  rngd.commit %s, %o2 : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

// The first chunk passes, the second misses its expectation: exit 1.
func.func @unused(%a: memref<64x16xi8>) {
  // expected-error @+1 {{never used}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  func.return
}
// -----
func.func @unused2(%a: memref<64x16xi8>) {
  // expected-error @+1 {{nothing like this}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  func.return
}

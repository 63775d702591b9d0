// A pass's diagnostic is covered by --verify-diagnostics too.
func.func @no_chain(%a: memref<64x16xf8E4M3FN>, %o: memref<64x16xf8E5M2>) {
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.convert' op cannot be legalised: the Fetch Adapter cannot convert f8E4M3FN to f8E5M2}}
  %c = fetch.convert %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], f8E5M2>
  rngd.commit %c, %o : !fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xf8E5M2>
  func.return
}

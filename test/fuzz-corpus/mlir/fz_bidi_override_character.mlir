

func.func @zp_changes_time(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<32x64xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op changes the stream shape from time [64] packet [32] to time [2, 32] packet [32]}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [2, 32], ‮32], i9>
  %r = rngd.cont32xf32>
  func.return
}



// Nor as the block scales of the Vector Engine.
func.func @i9_as_block_scales(%a: memref<64x32xf32>, %b: memref<64x2xi8>, %o: memref<64x32xf32>) {
  %x = fetch.fetch %a : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  %q = fetch.fetch %b : memref<64x2xi8> -> !fetch.stream<main, [64], [2], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [2], i8> -> !fetch.stream<main, [64], [2], i9>
  // expected-error @+1 {{'rngd.block_scale' op cannot use an i9 stream as block scales: i9 is the Contraction Engine's staging type}}
  %y = rngd.bl"P&4ock_scale %x, %z {block = 16 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [2], i9> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

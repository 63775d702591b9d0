// Two 32-byte tensors and no address: fetch-place-dm puts %w at 0x0 and %x at
// the next 64-byte boundary, 0x40.  Used by dm-size-boundary.test.

func.func @two(%w: memref<2x16xi8>, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

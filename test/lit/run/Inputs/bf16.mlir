// bf16 -> f32 (hardware.md §2.2a: subnormals flush to a zero of their sign,
// any NaN becomes 0x7FC00000).
func.func @widen(%x: memref<2x8xbf16>, %out: memref<2x8xf32>) {
  %s = fetch.fetch %x {map = affine_map<(r, e) -> (r, e)>}
      : memref<2x8xbf16> -> !fetch.stream<main, [2], [8], bf16>
  %f = fetch.cast %s : !fetch.stream<main, [2], [8], bf16> -> !fetch.stream<main, [2], [8], f32>
  rngd.commit %f, %out : !fetch.stream<main, [2], [8], f32>, memref<2x8xf32>
  func.return
}

// i4 -> i32: a 2 x 16 tensor of signed 4-bit values widened by the adapter's cast.
func.func @ints(%q: memref<2x16xi4>, %out: memref<2x16xi32>) {
  %s = fetch.fetch %q {map = affine_map<(r, p, e) -> (r, p * 8 + e)>}
      : memref<2x16xi4> -> !fetch.stream<main, [2, 2], [8], i4>
  %c = fetch.cast %s : !fetch.stream<main, [2, 2], [8], i4> -> !fetch.stream<main, [2, 2], [8], i32>
  rngd.commit %c, %out : !fetch.stream<main, [2, 2], [8], i32>, memref<2x16xi32>
  func.return
}

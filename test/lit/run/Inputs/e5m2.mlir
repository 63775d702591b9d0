// f8E5M2 -> bf16 through the non-paired table (fetch.convert legalises to it).
func.func @act(%a: memref<1x32xf8E5M2>, %out: memref<1x32xbf16>) {
  %s = fetch.fetch %a {map = affine_map<(r, e) -> (r, e)>}
      : memref<1x32xf8E5M2> -> !fetch.stream<main, [1], [32], f8E5M2>
  %b = fetch.convert %s : !fetch.stream<main, [1], [32], f8E5M2> -> !fetch.stream<main, [1], [32], bf16>
  rngd.commit %b, %out : !fetch.stream<main, [1], [32], bf16>, memref<1x32xbf16>
  func.return
}

func.func @f(%m: memref<4x16xbf16>, %o: memref<64xbf16>) {
  %s0 = fetch.fetch %m {base = 0 : i64, map = affine_map<(d0, d1) -> (d0 + 1, d1)>} : memref<4x16xbf16> -> !fetch.stream<main, [4], [16], bf16>
  rngd.commit %s0, %o : !fetch.stream<main, [4], [16], bf16>, memref<64xbf16>
  func.return
}

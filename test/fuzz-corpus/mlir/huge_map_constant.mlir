func.func @f(%m: memref<4x16xi8>, %o: memref<64xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64, map = affine_map<(d0, d1) -> (d0, d1 + 18446744073709551616)>} : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s0, %o : !fetch.stream<main, [4], [16], i8>, memref<64xi8>
  func.return
}

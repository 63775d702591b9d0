func.func @f(%m: memref<16x16xf16>, %o: memref<256xf16>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xf16> -> !fetch.stream<main, [16], [16], f16>
  rngd.commit %s0, %o : !fetch.stream<main, [16], [16], f16>, memref<256xf16>
  func.return
}

func.func @f(%m: memref<2x2x2x2x2x2x2x2x2xi8, strided<[65536, 16384, 4096, 1024, 256, 64, 16, 4, 1]>>, %o: memref<512xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<2x2x2x2x2x2x2x2x2xi8, strided<[65536, 16384, 4096, 1024, 256, 64, 16, 4, 1]>> -> !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2, 2], [2], i8>
  rngd.commit %s0, %o : !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2, 2], [2], i8>, memref<512xi8>
  func.return
}

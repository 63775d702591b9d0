func.func @f(%o: memref<256xi8>) {
  rngd.commit %s, %o : !fetch.stream<main, [16], [16], i8>, memref<256xi8>
  func.return
}



func.func @second(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
}

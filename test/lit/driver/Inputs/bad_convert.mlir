// f32 -> i8 has no legal chain: fetch-legalize-convert reports it (ir.md §4).
func.func @k(%a: memref<64x16xf32>, %o: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xf32> -> !fetch.stream<main, [64], [16], f32>
  %b = fetch.convert %s : !fetch.stream<main, [64], [16], f32> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %b, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

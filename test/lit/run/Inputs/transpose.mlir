// rngd.transpose from [2] x [3] to [3] x [2]: fetchc run computes a row-major
// reshape and warns at the op (ir.md §2: the IR fixes no permutation).
func.func @tr(%x: memref<2x3xi8>, %y: memref<3x2xi8>) {
  %s = fetch.fetch %x {map = affine_map<(t, p) -> (t, p)>} : memref<2x3xi8> -> !fetch.stream<main, [2], [3], i8>
  %t = rngd.transpose %s : !fetch.stream<main, [2], [3], i8> -> !fetch.stream<main, [3], [2], i8>
  rngd.commit %t, %y : !fetch.stream<main, [3], [2], i8>, memref<3x2xi8>
  func.return
}

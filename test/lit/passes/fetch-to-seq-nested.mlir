// Programs of nested modules: a function inside `builtin.module @m` names its
// programs `m/function/index`, so equal function names in two named nested
// modules do not collide; in unnamed nested modules they would, which is an
// error at the second kernel (with a note at the first).
// RUN: %fetchc %s --emit=seq | FileCheck %s

// CHECK: fetch_seq.program %a {program_name = "left/k/0"
// CHECK: fetch_seq.program %a {program_name = "right/k/0"
builtin.module {
  builtin.module @left {
    func.func @k(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
      %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
      rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
      func.return
    }
  }
  builtin.module @right {
    func.func @k(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
      %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
      rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
      func.return
    }
  }
}

// Two kernels with the same name in unnamed nested modules would give
// colliding program names: an error at the second, a note at the first.
// RUN: %fetchc %s --verify-diagnostics

builtin.module {
  builtin.module {
    // expected-note @+1 {{the other kernel is here}}
    func.func @k(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
      %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
      rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
      func.return
    }
  }
  builtin.module {
    // expected-error @+1 {{'func.func' op is a second kernel named 'k': its programs would be named like the other's; give the enclosing builtin.module a symbol name (builtin.module @name) or rename the function}}
    func.func @k(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
      %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
      rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
      func.return
    }
  }
}

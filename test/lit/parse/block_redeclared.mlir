// A block label defined twice after a forward reference is a located
// re-declaration error (xDSL 0.75 raised KeyError here; fuzzer find).
// RUN: not %fetchc %s -p '' 2>&1 | FileCheck %s
// CHECK: block_redeclared.mlir:[[# @LINE + 8]]:1: error: re-declaration of block 'next'
// CHECK: block_redeclared.mlir:[[# @LINE + 5]]:1: note: see here
// CHECK-NOT: KeyError

func.func @f() {
  cf.br ^next
^next:
  func.return
^next:
  func.return
}

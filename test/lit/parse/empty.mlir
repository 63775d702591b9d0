// An input with nothing but comments (or nothing at all) is an empty module:
// exit 0; --emit=bin gives a valid seq.bin without programs.
//
// RUN: %fetchc -p '' --emit=mlir %s | FileCheck %s
// RUN: %python -c "open(r'%t.empty.mlir', 'w').close()"
// RUN: %fetchc --emit=mlir %t.empty.mlir | FileCheck %s
// RUN: %fetchc %t.empty.mlir -o %t.bin
// RUN: %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS
// RUN: %fetchc --split-input-file --emit=mlir %s | FileCheck %s

// CHECK: builtin.module {
// CHECK-NEXT: }
// DIS: programs: 0

// RUN: %fetchc %s --emit=mlir | FileCheck %s
// RUN: %fetchc %s -o %t.bin && %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// CHECK: func.func @decode
// CHECK: fetch.table_lookup {{.*}} -> !fetch.stream<main, [4096], [16], f8E4M3FN>
// DIS: program 0: "decode/0"
// DIS-NEXT: unit: main
// DIS: sequencer: [65536 : 1] : 16
func.func @decode(%w: memref<4096x16xf4E2M1FN>.fetch %a : memref<64x16xi9> -> !fetch.stream<main, [64], [16], i9>
  %r = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [16], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [16], i32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [16], i32>, memref<64x16xi32>
  func.return
}


// The `xdsl.universe` entry point (pyproject.toml -> fetchc/universe.py) lets
// a plain xdsl-opt parse, verify and print fetch / rngd / fetch_seq IR and run
// fetchc's passes.
//
// RUN: %xdsl-opt %s | FileCheck %s
// RUN: %xdsl-opt %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %xdsl-opt -p fetch-legalize-convert %s | FileCheck %s --check-prefix=LEGAL
// RUN: %xdsl-opt -p fetch-legalize-convert,fetch-split-scaling,fetch-to-seq %s | FileCheck %s --check-prefix=SEQ
// RUN: %xdsl-opt -p fetch-legalize-convert %s | %fetchc -p '' --emit=mlir | FileCheck %s --check-prefix=LEGAL
// And xdsl-opt parses fetchc's output, custom and generic, at every level:
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %xdsl-opt | FileCheck %s
// RUN: %fetchc -p fetch-legalize-convert --emit=mlir %s | %xdsl-opt | FileCheck %s --check-prefix=LEGAL
// RUN: %fetchc --emit=seq %s | %xdsl-opt | FileCheck %s --check-prefix=SEQ
// RUN: %fetchc --emit=seq --print-op-generic %s | %xdsl-opt | FileCheck %s --check-prefix=SEQ

// CHECK: func.func @decode(
// CHECK-NEXT: %s = fetch.fetch %w {base = 4096 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
// CHECK-NEXT: %d = fetch.convert %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
// CHECK-NEXT: rngd.commit %d, %out : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
// CHECK-NEXT: %q = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
// CHECK-NEXT: %z = fetch.zp_sub %q, -3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
// CHECK-NEXT: %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>

// LEGAL-NOT: fetch.convert
// LEGAL: fetch.table_lookup %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
// LEGAL-NEXT: fetch.cast {{%[0-9a-z_]+}} : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], f32>
// LEGAL-NOT: fetch.convert

// SEQ: fetch_seq.table @f4E2M1FN_to_f8E4M3FN
// SEQ: fetch_seq.program %w {program_name = "decode/0"
// SEQ: fetch_seq.program %x {program_name = "decode/1"

func.func @decode(%w: memref<64x16xf4E2M1FN>, %out: memref<64x16xf32>, %x: memref<64x32xi8>, %t: !rngd.trf<i8>, %acc: memref<64x32xi32>) {
  %s = fetch.fetch %w {base = 4096 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %d, %out : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  %q = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, -3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %acc : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// Round trip of the types !fetch.stream, !rngd.trf, !rngd.vrf, alone (as
// results of an unregistered-style test op, so no verifier rule applies) and
// inside attributes, in custom and generic form.
//
// RUN: %fetchc -p '' --emit=mlir %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir %s > %t.custom
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir > %t.via-generic
// RUN: diff %t.custom %t.via-generic

// CHECK: "test.op"() : () -> !fetch.stream<main, [4096], [16], f4E2M1FN>
// CHECK-NEXT: "test.op"() : () -> !fetch.stream<sub, [2, 3, 4], [8, 4], i8>
// CHECK-NEXT: "test.op"() : () -> !fetch.stream<main, [], [1], f32>
// CHECK-NEXT: "test.op"() : () -> !fetch.stream<main, [65536, 2], [32], i5>
// CHECK-NEXT: "test.op"() : () -> !fetch.stream<main, [1], [2], i9>
// CHECK-NEXT: "test.op"() : () -> (!fetch.stream<main, [1], [1], bf16>, !fetch.stream<main, [1], [1], f8E4M3FN>, !fetch.stream<main, [1], [1], f8E5M2>, !fetch.stream<main, [1], [1], f8E8M0FNU>, !fetch.stream<main, [1], [1], i4>, !fetch.stream<main, [1], [1], i16>, !fetch.stream<main, [1], [1], i32>)
// CHECK-NEXT: "test.op"() : () -> !fetch.stream<main, [4], [4], f16>
// CHECK-NEXT: "test.op"() : () -> (!rngd.trf<f8E4M3FN>, !rngd.trf<i8>, !rngd.trf<bf16>)
// CHECK-NEXT: "test.op"() : () -> (!rngd.vrf<[120, 8], f32>, !rngd.vrf<[1], i32>, !rngd.vrf<[4, 30, 8], f8E8M0FNU>)
// CHECK-NEXT: "test.op"() {s = !fetch.stream<sub, [7], [8], f8E5M2>, t = !rngd.trf<i4>, v = !rngd.vrf<[2, 3], bf16>} : () -> ()
%0 = "test.op"() : () -> !fetch.stream<main, [4096], [16], f4E2M1FN>
%1 = "test.op"() : () -> !fetch.stream<sub,[2,3,4],[8,4],i8>
%2 = "test.op"() : () -> !fetch.stream<main, [], [1], f32>
%3 = "test.op"() : () -> !fetch.stream<main, [65536, 2], [32], i5>
%4 = "test.op"() : () -> !fetch.stream<  main , [ 1 ] , [ 2 ] , i9 >
%5:7 = "test.op"() : () -> (!fetch.stream<main, [1], [1], bf16>, !fetch.stream<main, [1], [1], f8E4M3FN>, !fetch.stream<main, [1], [1], f8E5M2>, !fetch.stream<main, [1], [1], f8E8M0FNU>, !fetch.stream<main, [1], [1], i4>, !fetch.stream<main, [1], [1], i16>, !fetch.stream<main, [1], [1], i32>)
// Other builtin types parse; the first op that needs hardware support rejects them.
%6 = "test.op"() : () -> !fetch.stream<main, [4], [4], f16>
%7:3 = "test.op"() : () -> (!rngd.trf<f8E4M3FN>, !rngd.trf<i8>, !rngd.trf<bf16>)
%8:3 = "test.op"() : () -> (!rngd.vrf<[120, 8], f32>, !rngd.vrf<[1], i32>, !rngd.vrf<[ 4,30 , 8 ],f8E8M0FNU>)
"test.op"() {s = !fetch.stream<sub, [7], [8], f8E5M2>, t = !rngd.trf<i4>, v = !rngd.vrf<[2, 3], bf16>} : () -> ()

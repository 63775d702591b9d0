// fetch_seq.table / fetch_seq.program as the default pipeline produces them
// (--emit=seq) round-trip: custom -> custom and custom -> generic -> custom
// are identical, and the re-parsed IR still serialises to the same seq.bin
// (but for the MANIFEST's source locations, which name the re-parsed file).
//
// RUN: %fetchc --emit=seq %s -o %t.seq.mlir
// RUN: %fetchc -p '' --emit=mlir %t.seq.mlir | diff %t.seq.mlir -
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %t.seq.mlir | %fetchc -p '' --emit=mlir | diff %t.seq.mlir -
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %t.seq.mlir | FileCheck %s --check-prefix=GENERIC
// RUN: %fetchc %s -o %t.direct.bin
// RUN: %fetchc -p '' --emit=bin %t.seq.mlir -o %t.reparsed.bin
// RUN: %python %S/../Inputs/same_seqbin.py %t.direct.bin %t.reparsed.bin | FileCheck %s --check-prefix=SAME
// SAME: same
// RUN: FileCheck %s < %t.seq.mlir

// CHECK: fetch_seq.table @f4E2M1FN_to_f8E4M3FN {in_type = f4E2M1FN, out_type = f8E4M3FN, entries = array<i32: 0, 48, 56,
// CHECK-SAME: paired}
// CHECK: %d = fetch_seq.program %w {program_name = "decode/0", {{.*}}table = @f4E2M1FN_to_f8E4M3FN, {{.*}}} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
// CHECK: %z = fetch_seq.program %q {program_name = "decode/1", {{.*}}zero_point = -3 : i32, {{.*}}} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i9>
// GENERIC: "fetch_seq.table"() <{
// GENERIC: "fetch_seq.program"(%w) <{

func.func @decode(%w: memref<64x16xf4E2M1FN>, %out: memref<64x16xf32>, %q: memref<64x32xi8>, %t: !rngd.trf<i8>, %acc: memref<64x32xi32>) {
  %s = fetch.fetch %w {base = 4096 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %d, %out : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  %qs = fetch.fetch %q : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %qs, -3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %r, %acc : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// --emit=seq prints the module in the fetch_seq dialect: the baked tables as
// fetch_seq.table symbols, one fetch_seq.program per Fetch Unit program
// (register-block fields as properties), downstream rngd ops unchanged.
// RUN: %fetchc %s --emit=seq | FileCheck %s
// RUN: %fetchc %s --emit=seq --print-op-generic | FileCheck %s --check-prefix=GENERIC
// The printed fetch_seq IR parses back and serialises to the same bytes but
// for the MANIFEST's source locations (they name the re-parsed file).
// RUN: %fetchc %s -o %t.direct.bin
// RUN: %fetchc %s --emit=seq -o %t.seq.mlir
// RUN: %fetchc %t.seq.mlir -p '' -o %t.roundtrip.bin
// RUN: %python %S/../Inputs/same_seqbin.py %t.direct.bin %t.roundtrip.bin | FileCheck %s --check-prefix=SAME
// SAME: same

// CHECK:      builtin.module {
// CHECK-NEXT:   fetch_seq.table @f4E2M1FN_to_f8E4M3FN {in_type = f4E2M1FN, out_type = f8E4M3FN, entries = array<i32: 0, 48, 56, 60, 64, 68, 72, 76, 128, 176, 184, 188, 192, 196, 200, 204, 12288, 12336, {{.*}}, 52428>, paired}
// CHECK-NEXT:   func.func @decode(%w: memref<512x64xf4E2M1FN> {rngd.dm_base = 65536 : i64, rngd.name = "w"}, %out: memref<512x64xf32> {rngd.dm_base = 81920 : i64, rngd.name = "out"}) {
// CHECK-NEXT:     %[[P:.*]] = fetch_seq.program %w {program_name = "decode/0", unit = #fetch_seq.unit<main>, base = 65536 : i64, packet_size = 64 : i64, fetch_size = 4 : i64, limits = array<i64: 32768>, strides = array<i64: 1>, stages = #fetch_seq.stages<table_lookup,type_conversion>, table = @f4E2M1FN_to_f8E4M3FN, type_conversion = #fetch_seq.cast<f8E4M3FN_to_f32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 8 : i64, words_per_packet = 8 : i64, cycles = 4096 : i64} : memref<512x64xf4E2M1FN> -> !fetch.stream<main, [512], [64], f32>
// CHECK-NEXT:     %[[S:.*]] = rngd.switch %[[P]] : !fetch.stream<main, [512], [64], f32> -> !fetch.stream<main, [512], [64], f32>
// CHECK-NEXT:     rngd.commit %[[S]], %out
// CHECK-NEXT:     func.return
// CHECK-NEXT:   }
// CHECK-NEXT: }

// GENERIC: "fetch_seq.table"() <{sym_name = "f4E2M1FN_to_f8E4M3FN", in_type = f4E2M1FN, out_type = f8E4M3FN, entries = array<i32: {{.*}}>, paired}> : () -> ()
// GENERIC: "fetch_seq.program"(%{{.*}}) <{program_name = "decode/0",

func.func @decode(%w: memref<512x64xf4E2M1FN>, %out: memref<512x64xf32>) {
  %s = fetch.fetch %w {base = 65536 : i64} : memref<512x64xf4E2M1FN> -> !fetch.stream<main, [512], [64], f4E2M1FN>
  %f = fetch.convert %s : !fetch.stream<main, [512], [64], f4E2M1FN> -> !fetch.stream<main, [512], [64], f32>
  %r = rngd.switch %f : !fetch.stream<main, [512], [64], f32> -> !fetch.stream<main, [512], [64], f32>
  rngd.commit %r, %out : !fetch.stream<main, [512], [64], f32>, memref<512x64xf32>
  func.return
}

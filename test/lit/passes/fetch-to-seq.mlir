// fetch-to-seq: one fetch_seq.program per fetch.fetch chain, named
// function/index (index counts the function's fetches from 0), in program
// order (functions in file order, fetches in order); lookup tables become
// module-level fetch_seq.table ops, one per distinct table however many
// programs and functions use it, in order of first use.
// RUN: %fetchc %s -p fetch-to-seq --emit=seq | FileCheck %s
// RUN: %fetchc %s -p fetch-to-seq --emit=mlir | FileCheck %s
// RUN: %fetchc %s -p fetch-to-seq --emit=seq | FileCheck %s --check-prefix=ONE
// RUN: %fetchc %s -p fetch-place-dm,fetch-to-seq -o %t.bin && %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// Tables first, in order of first use: f8E5M2 -> bf16 (@first/1) before
// f4E2M1FN -> f8E4M3FN (@first/2, @second/0).
// CHECK:      builtin.module {
// CHECK-NEXT:   fetch_seq.table @f8E5M2_to_bf16 {in_type = f8E5M2, out_type = bf16, entries = array<i32: 0, 14208, 14336, 14400, {{.*}}, 32640, 32704, 32704, 32704, 32768, 46976, {{.*}}, 65408, 65472, 65472, 65472>}
// CHECK-NEXT:   fetch_seq.table @f4E2M1FN_to_f8E4M3FN {in_type = f4E2M1FN, out_type = f8E4M3FN, entries = array<i32: 0, 48, 56, 60, 64, 68, 72, 76, 128, {{.*}}, 52428>, paired}
// CHECK-NEXT:   func.func @first(
// ONE-COUNT-1:  fetch_seq.table @f4E2M1FN_to_f8E4M3FN
// ONE-NOT:      fetch_seq.table
// ONE-NOT:      fetch.fetch
// ONE-NOT:      fetch.table_lookup
// ONE-NOT:      fetch.cast
// ONE-NOT:      fetch.zp_sub

// A fetch with no stage: stages = 0, no table, no type_conversion.
// CHECK:      %[[A:.*]] = fetch_seq.program %a {program_name = "first/0", unit = #fetch_seq.unit<main>, base = 65536 : i64, packet_size = 16 : i64, fetch_size = 32 : i64, limits = array<i64: 1024>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 1 : i64, cycles = 64 : i64} : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
// CHECK-NEXT: rngd.commit %[[A]], %ao
// CHECK:      %[[B:.*]] = fetch_seq.program %b {program_name = "first/1", {{.*}}stages = #fetch_seq.stages<table_lookup>, table = @f8E5M2_to_bf16, {{.*}}flit_count = 2 : i64{{.*}}} : memref<64x32xf8E5M2> -> !fetch.stream<main, [64], [32], bf16>
// CHECK:      fetch_seq.program %c {program_name = "first/2", {{.*}}stages = #fetch_seq.stages<table_lookup>, table = @f4E2M1FN_to_f8E4M3FN
// CHECK:      func.func @second(
// CHECK:      fetch_seq.program %d {program_name = "second/0", {{.*}}stages = #fetch_seq.stages<table_lookup,type_conversion>, table = @f4E2M1FN_to_f8E4M3FN, type_conversion = #fetch_seq.cast<f8E4M3FN_to_f32>
// CHECK:      fetch_seq.program %e {program_name = "second/1", {{.*}}stages = #fetch_seq.stages<zero_point>, zero_point = -7 : i32, zp_mode = #fetch_seq.zp_mode<i4_to_i5>, flit_count = 2 : i64
// CHECK:      fetch_seq.program %f {program_name = "second/2", {{.*}}stages = #fetch_seq.stages<zero_point>, zero_point = 100 : i32, zp_mode = #fetch_seq.zp_mode<i8_to_i9>, flit_count = 2 : i64
// CHECK:      fetch_seq.program %g {program_name = "second/3", {{.*}}stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 2 : i64

// DIS:      tables: 2
// DIS-NEXT: table 0: f8E5M2 -> bf16, non-paired
// DIS:      table 1: f4E2M1FN -> f8E4M3FN, paired
// DIS:      programs: 7
// DIS-NEXT: program 0: "first/0"
// DIS:        table: none
// DIS:      program 1: "first/1"
// DIS:        table: 0
// DIS:      program 2: "first/2"
// DIS:        table: 1
// DIS:      program 3: "second/0"
// DIS:        stages: table_lookup, type_conversion
// DIS-NEXT:   table: 1
// DIS-NEXT:   type_conversion: 3 (f8E4M3FN -> f32)
// DIS-NEXT:   zero_point: off
// DIS-NEXT:   flit_count: 2
// DIS:      program 4: "second/1"
// DIS:        in_dtype: i4
// DIS-NEXT:   out_dtype: i5
// DIS:        stages: zero_point
// DIS-NEXT:   table: none
// DIS-NEXT:   type_conversion: none
// DIS-NEXT:   zero_point: -7 (i4 -> i5)
// DIS-NEXT:   flit_count: 2
// DIS:      program 5: "second/2"
// DIS:        zero_point: 100 (i8 -> i9)
// DIS-NEXT:   flit_count: 2
// DIS:      program 6: "second/3"
// DIS:        in_dtype: f4E2M1FN
// DIS-NEXT:   out_dtype: f4E2M1FN
// DIS:        sequencer: [6144 : 1] : 96
// DIS-NEXT:   fetch_size: 16
// DIS:        flit_count: 2
// DIS-NEXT:   words_per_packet: 3

func.func @first(%a: memref<64x16xbf16>, %ao: memref<64x16xbf16>,
                 %b: memref<64x32xf8E5M2>, %bo: memref<64x32xbf16>,
                 %c: memref<64x32xf4E2M1FN>, %co: memref<64x32xf8E4M3FN>) {
  %0 = fetch.fetch %a {base = 65536 : i64} : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %0, %ao : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  %1 = fetch.fetch %b {base = 131072 : i64} : memref<64x32xf8E5M2> -> !fetch.stream<main, [64], [32], f8E5M2>
  %2 = fetch.table_lookup %1 : !fetch.stream<main, [64], [32], f8E5M2> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %2, %bo : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  %3 = fetch.fetch %c {base = 196608 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %4 = fetch.table_lookup %3 : !fetch.stream<main, [64], [32], f4E2M1FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  rngd.commit %4, %co : !fetch.stream<main, [64], [32], f8E4M3FN>, memref<64x32xf8E4M3FN>
  func.return
}

// Same e2m1 table from another function; i4 -> i5 and i8 -> i9 (flit_count
// counts i5 as 1 byte, i9 as 2); a 4-bit stream without stages (half a byte
// per element: 96 codes = 48 bytes = 2 flits, rounded up).
func.func @second(%d: memref<64x16xf4E2M1FN>, %do: memref<64x16xf32>,
                  %e: memref<64x64xi4>, %f: memref<64x32xi8>, %t: !rngd.trf<i8>, %t4: !rngd.trf<i4>,
                  %eo: memref<64x64xi32>, %fo: memref<64x32xi32>,
                  %g: memref<64x96xf4E2M1FN>, %go: memref<64x96xf4E2M1FN>) {
  %0 = fetch.fetch %d {base = 262144 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %1 = fetch.table_lookup %0 : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  %2 = fetch.cast %1 : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [64], [16], f32>
  rngd.commit %2, %do : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
  %3 = fetch.fetch %e {base = 327680 : i64} : memref<64x64xi4> -> !fetch.stream<main, [64], [64], i4>
  %4 = fetch.zp_sub %3, -7 : !fetch.stream<main, [64], [64], i4> -> !fetch.stream<main, [64], [64], i5>
  %5 = rngd.contract_outer %4, %t4 : !fetch.stream<main, [64], [64], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [64], i32>
  rngd.commit %5, %eo : !fetch.stream<main, [64], [64], i32>, memref<64x64xi32>
  %6 = fetch.fetch %f {base = 393216 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %7 = fetch.zp_sub %6, 100 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %8 = rngd.contract_outer %7, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %8, %fo : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %9 = fetch.fetch %g {base = 458752 : i64} : memref<64x96xf4E2M1FN> -> !fetch.stream<main, [64], [96], f4E2M1FN>
  rngd.commit %9, %go : !fetch.stream<main, [64], [96], f4E2M1FN>, memref<64x96xf4E2M1FN>
  func.return
}

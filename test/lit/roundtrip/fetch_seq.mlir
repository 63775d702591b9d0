// fetch_seq.table / fetch_seq.program written out as text (the --emit=seq
// output of a small decode + zero-point input) parse, verify and print back
// identically in custom form, and through the generic form.
//
// RUN: %fetchc -p '' --emit=mlir %s > %t.custom
// RUN: %fetchc -p '' --emit=mlir %t.custom | diff %t.custom -
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir | diff %t.custom -
// RUN: FileCheck %s < %t.custom
// RUN: %fetchc -p '' %s -o %t.bin
// RUN: %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// CHECK: fetch_seq.table @f4E2M1FN_to_f8E4M3FN {in_type = f4E2M1FN, out_type = f8E4M3FN, entries = array<i32: 0, 48, 56, 60,
// CHECK-SAME: 52428>, paired}
// CHECK: %d = fetch_seq.program %w {program_name = "decode/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 16 : i64, fetch_size = 4 : i64, limits = array<i64: 1024>, strides = array<i64: 1>, stages = #fetch_seq.stages<table_lookup,type_conversion>, table = @f4E2M1FN_to_f8E4M3FN, type_conversion = #fetch_seq.cast<f8E4M3FN_to_f32>,
// CHECK: %z = fetch_seq.program %q {program_name = "decode/1", {{.*}}limits = array<i64: 2048>, strides = array<i64: 1>, stages = #fetch_seq.stages<zero_point>, zero_point = -3 : i32,
// DIS: program 0: "decode/0"
// DIS: program 1: "decode/1"

builtin.module {
  fetch_seq.table @f4E2M1FN_to_f8E4M3FN {in_type = f4E2M1FN, out_type = f8E4M3FN, entries = array<i32: 0, 48, 56, 60, 64, 68, 72, 76, 128, 176, 184, 188, 192, 196, 200, 204, 12288, 12336, 12344, 12348, 12352, 12356, 12360, 12364, 12416, 12464, 12472, 12476, 12480, 12484, 12488, 12492, 14336, 14384, 14392, 14396, 14400, 14404, 14408, 14412, 14464, 14512, 14520, 14524, 14528, 14532, 14536, 14540, 15360, 15408, 15416, 15420, 15424, 15428, 15432, 15436, 15488, 15536, 15544, 15548, 15552, 15556, 15560, 15564, 16384, 16432, 16440, 16444, 16448, 16452, 16456, 16460, 16512, 16560, 16568, 16572, 16576, 16580, 16584, 16588, 17408, 17456, 17464, 17468, 17472, 17476, 17480, 17484, 17536, 17584, 17592, 17596, 17600, 17604, 17608, 17612, 18432, 18480, 18488, 18492, 18496, 18500, 18504, 18508, 18560, 18608, 18616, 18620, 18624, 18628, 18632, 18636, 19456, 19504, 19512, 19516, 19520, 19524, 19528, 19532, 19584, 19632, 19640, 19644, 19648, 19652, 19656, 19660, 32768, 32816, 32824, 32828, 32832, 32836, 32840, 32844, 32896, 32944, 32952, 32956, 32960, 32964, 32968, 32972, 45056, 45104, 45112, 45116, 45120, 45124, 45128, 45132, 45184, 45232, 45240, 45244, 45248, 45252, 45256, 45260, 47104, 47152, 47160, 47164, 47168, 47172, 47176, 47180, 47232, 47280, 47288, 47292, 47296, 47300, 47304, 47308, 48128, 48176, 48184, 48188, 48192, 48196, 48200, 48204, 48256, 48304, 48312, 48316, 48320, 48324, 48328, 48332, 49152, 49200, 49208, 49212, 49216, 49220, 49224, 49228, 49280, 49328, 49336, 49340, 49344, 49348, 49352, 49356, 50176, 50224, 50232, 50236, 50240, 50244, 50248, 50252, 50304, 50352, 50360, 50364, 50368, 50372, 50376, 50380, 51200, 51248, 51256, 51260, 51264, 51268, 51272, 51276, 51328, 51376, 51384, 51388, 51392, 51396, 51400, 51404, 52224, 52272, 52280, 52284, 52288, 52292, 52296, 52300, 52352, 52400, 52408, 52412, 52416, 52420, 52424, 52428>, paired}
  func.func @decode(%w: memref<64x16xf4E2M1FN> {rngd.dm_base = 4096 : i64}, %out: memref<64x16xf32> {rngd.dm_base = 8192 : i64}, %q: memref<64x32xi8> {rngd.dm_base = 0 : i64}, %t: !rngd.trf<i8>, %acc: memref<64x32xi32> {rngd.dm_base = 12288 : i64}) {
    %d = fetch_seq.program %w {program_name = "decode/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 16 : i64, fetch_size = 4 : i64, limits = array<i64: 1024>, strides = array<i64: 1>, stages = #fetch_seq.stages<table_lookup,type_conversion>, table = @f4E2M1FN_to_f8E4M3FN, type_conversion = #fetch_seq.cast<f8E4M3FN_to_f32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 2 : i64, words_per_packet = 2 : i64, cycles = 128 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f32>
    rngd.commit %d, %out : !fetch.stream<main, [64], [16], f32>, memref<64x16xf32>
    %z = fetch_seq.program %q {program_name = "decode/1", unit = #fetch_seq.unit<main>, base = 0 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 2048>, strides = array<i64: 1>, stages = #fetch_seq.stages<zero_point>, zero_point = -3 : i32, zp_mode = #fetch_seq.zp_mode<i8_to_i9>, flit_count = 2 : i64, words_per_packet = 1 : i64, cycles = 64 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i9>
    %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
    rngd.commit %r, %acc : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
    func.return
  }
}

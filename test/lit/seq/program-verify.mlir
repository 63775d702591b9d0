// Hand-written fetch_seq IR is checked by the fetch_seq.program verifier, at
// the op, before the seq.bin writer sees it: the record rules of
// fetchc/target/record.py (the seq.bin reader's, naming fields, not words).
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p ''

// A consistent program: i8 -> i32 cast (code 1), 8 per 8-byte read.
func.func @ok(%b: memref<64xi8>, %o: memref<64xi32>) {
  %s = fetch_seq.program %b {program_name = "ok/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @wrong_code(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op type_conversion is code 0 (i4 -> i32) but the value entering the cast is i8}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i4_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @no_stage_wrong_type(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op out_dtype is i32 but the stages turn in_dtype i8 into i8}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @words(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op words_per_packet is 2, but 2 reads of 8 i8 elements (fetch_size 8) are 16 elements, not packet_size 32}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 2 : i64, cycles = 4 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @flits(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op flit_count is 1; a packet of 32 i32 elements occupies 4 flits}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @zp(%b: memref<64xi8>, %t: !rngd.trf<i8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op zp_mode is 1 but an i8 -> i9 zero point is mode 2}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<zero_point>, zero_point = 3 : i32, zp_mode = #fetch_seq.zp_mode<i4_to_i5>, flit_count = 2 : i64, words_per_packet = 1 : i64, cycles = 2 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i9>
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [2], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @unit(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch_seq.program' op unit main does not match the result stream's sub context}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<sub, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<sub, [2], [32], i8>, memref<64xi8>
  func.return
}

// -----

func.func @base(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch_seq.program' op base is 524288, not a DM byte address below 2^19 = 524288 (one slice's DM)}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 524288 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 1 : i64, cycles = 2 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}

// -----

// A packet may span several contiguous runs (hardware.md §3): [4 : 16, 8 : 1]
// holds 32-element packets read 8 elements at a time.
func.func @runs(%b: memref<64xi8>, %o: memref<32xi8>) {
  %s = fetch_seq.program %b {program_name = "runs/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 4, 8>, strides = array<i64: 16, 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 4 : i64, cycles = 4 : i64} : memref<64xi8> -> !fetch.stream<main, [1], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [1], [32], i8>, memref<32xi8>
  func.return
}

// -----

func.func @run_read(%b: memref<64xi8>, %o: memref<32xi8>) {
  // expected-error @+1 {{'fetch_seq.program' op fetch_size 16 bytes reads 16 elements, which does not divide the largest contiguous access of 8 elements (hardware.md §3)}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 16 : i64, limits = array<i64: 4, 8>, strides = array<i64: 16, 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 2 : i64, cycles = 2 : i64} : memref<64xi8> -> !fetch.stream<main, [1], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [1], [32], i8>, memref<32xi8>
  func.return
}

// -----

func.func @strided(%b: memref<64xi8>, %o: memref<32xi8>) {
  // expected-error @+1 {{'fetch_seq.program' op the innermost entry [32 : 2] cannot hold packets of 32 elements (it needs stride 0 or 1, or a one-element packet; hardware.md §3)}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 32>, strides = array<i64: 2>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 4 : i64, cycles = 4 : i64} : memref<64xi8> -> !fetch.stream<main, [1], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [1], [32], i8>, memref<32xi8>
  func.return
}

// -----

func.func @cast_flit(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op one read of 16 elements casts to 64 bytes of i32, more than one 32-byte flit (hardware.md §2.2)}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 16 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 2 : i64, cycles = 4 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

// A program whose table op lacks a property: the table's error, and one at
// the program naming it (never a verifier crash; fuzzer find).
builtin.module {
  // expected-error @+1 {{'fetch_seq.table' op property 'out_type' expected in operation 'fetch_seq.table'}}
  fetch_seq.table @f8E5M2_to_bf16 {in_type = f8E5M2, entries = array<i32: 0, 14208, 14336, 14400, 14464, 14496, 14528, 14560, 14592, 14624, 14656, 14688, 14720, 14752, 14784, 14816, 14848, 14880, 14912, 14944, 14976, 15008, 15040, 15072, 15104, 15136, 15168, 15200, 15232, 15264, 15296, 15328, 15360, 15392, 15424, 15456, 15488, 15520, 15552, 15584, 15616, 15648, 15680, 15712, 15744, 15776, 15808, 15840, 15872, 15904, 15936, 15968, 16000, 16032, 16064, 16096, 16128, 16160, 16192, 16224, 16256, 16288, 16320, 16352, 16384, 16416, 16448, 16480, 16512, 16544, 16576, 16608, 16640, 16672, 16704, 16736, 16768, 16800, 16832, 16864, 16896, 16928, 16960, 16992, 17024, 17056, 17088, 17120, 17152, 17184, 17216, 17248, 17280, 17312, 17344, 17376, 17408, 17440, 17472, 17504, 17536, 17568, 17600, 17632, 17664, 17696, 17728, 17760, 17792, 17824, 17856, 17888, 17920, 17952, 17984, 18016, 18048, 18080, 18112, 18144, 18176, 18208, 18240, 18272, 32640, 32704, 32704, 32704, 32768, 46976, 47104, 47168, 47232, 47264, 47296, 47328, 47360, 47392, 47424, 47456, 47488, 47520, 47552, 47584, 47616, 47648, 47680, 47712, 47744, 47776, 47808, 47840, 47872, 47904, 47936, 47968, 48000, 48032, 48064, 48096, 48128, 48160, 48192, 48224, 48256, 48288, 48320, 48352, 48384, 48416, 48448, 48480, 48512, 48544, 48576, 48608, 48640, 48672, 48704, 48736, 48768, 48800, 48832, 48864, 48896, 48928, 48960, 48992, 49024, 49056, 49088, 49120, 49152, 49184, 49216, 49248, 49280, 49312, 49344, 49376, 49408, 49440, 49472, 49504, 49536, 49568, 49600, 49632, 49664, 49696, 49728, 49760, 49792, 49824, 49856, 49888, 49920, 49952, 49984, 50016, 50048, 50080, 50112, 50144, 50176, 50208, 50240, 50272, 50304, 50336, 50368, 50400, 50432, 50464, 50496, 50528, 50560, 50592, 50624, 50656, 50688, 50720, 50752, 50784, 50816, 50848, 50880, 50912, 50944, 50976, 51008, 51040, 65408, 65472, 65472, 65472>}
  func.func @decode_activations(%act: memref<128x4096xf8E5M2> {rngd.dm_base = 0 : i64}, %out: memref<128x4096xbf16> {rngd.dm_base = 524288 : i64}) {
    // expected-error @+1 {{'fetch_seq.program' op table @f8E5M2_to_bf16 is not a valid fetch_seq.table (it lacks a property: see the error there)}}
    %b = fetch_seq.program %act {program_name = "decode_activations/0", unit = #fetch_seq.unit<main>, base = 0 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 128, 4096>, strides = array<i64: 4096, 1>, stages = #fetch_seq.stages<table_lookup>, table = @f8E5M2_to_bf16, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 2 : i64, words_per_packet = 1 : i64, cycles = 16384 : i64} : memref<128x4096xf8E5M2> -> !fetch.stream<main, [128, 128], [32], bf16>
    %sw = rngd.switch %b : !fetch.stream<main, [128, 128], [32], bf16> -> !fetch.stream<main, [128, 128], [32], bf16>
    %co = rngd.collect %sw : !fetch.stream<main, [128, 128], [32], bf16> -> !fetch.stream<main, [128, 128], [32], bf16>
    rngd.commit %co, %out : !fetch.stream<main, [128, 128], [32], bf16>, memref<128x4096xbf16>
    func.return
  }
}

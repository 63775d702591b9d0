// Hand-written fetch_seq IR is checked by the fetch_seq.program verifier, at
// the op, before the seq.bin writer sees it.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p ''

// A consistent program: i8 -> i32 cast (code 1), 8 per 8-byte read.
func.func @ok(%b: memref<64xi8>, %o: memref<64xi32>) {
  %s = fetch_seq.program %b {program_name = "ok/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @wrong_code(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op type_conversion i4_to_i32 casts i4 -> i32, but its input is i8}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i4_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @no_stage_wrong_type(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op its stages turn i8 into i8, but its result stream holds i32}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @words(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op words_per_packet 2 x 8 elements per 8-byte read is not the packet of 32}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 4 : i64, words_per_packet = 2 : i64, cycles = 4 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @flits(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op flit_count 1: a packet of 32 i32 occupies 4 flits}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 32 : i64, fetch_size = 8 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<type_conversion>, type_conversion = #fetch_seq.cast<i8_to_i32>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 4 : i64, cycles = 8 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

func.func @zp(%b: memref<64xi8>, %t: !rngd.trf<i8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch_seq.program' op zero-point stage on i8 needs zp_mode i8_to_i9, not i4_to_i5}}
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
  // expected-error @+1 {{'fetch_seq.program' op base 4294967296 is not a DM byte address below 2^32}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4294967296 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 1 : i64, cycles = 2 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}

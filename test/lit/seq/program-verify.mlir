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
  // expected-error @+1 {{'fetch_seq.program' op zp_mode is 1 but a i8 -> i9 zero point is mode 2}}
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
  // expected-error @+1 {{'fetch_seq.program' op base is 4294967296, not a DM byte address below 2^32}}
  %s = fetch_seq.program %b {program_name = "k/0", unit = #fetch_seq.unit<main>, base = 4294967296 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 64>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 1 : i64, cycles = 2 : i64} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
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

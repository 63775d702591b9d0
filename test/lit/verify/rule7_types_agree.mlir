// ir.md §3 rule 7: context, time and packet shape are unchanged by adapter
// ops; fetch.fetch's element type equals its memref's.  The rngd ops keep
// their types consistent the same way.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: a multi-dim time shape kept through two stages.
func.func @kept(%w: memref<8x8x16xf4E2M1FN>, %o: memref<8x8x16xf32>) {
  %s = fetch.fetch %w : memref<8x8x16xf4E2M1FN> -> !fetch.stream<main, [8, 8], [16], f4E2M1FN>
  %d = fetch.table_lookup %s : !fetch.stream<main, [8, 8], [16], f4E2M1FN> -> !fetch.stream<main, [8, 8], [16], f8E4M3FN>
  %f = fetch.cast %d : !fetch.stream<main, [8, 8], [16], f8E4M3FN> -> !fetch.stream<main, [8, 8], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [8, 8], [16], f32>, memref<8x8x16xf32>
  func.return
}

// -----

func.func @cast_changes_shape(%a: memref<64x16xf8E4M3FN>, %o: memref<32x32xf32>) {
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.cast' op changes the stream shape from time [64] packet [16] to time [32] packet [32]; adapter stages keep the shape}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<main, [32], [32], f32>
  rngd.commit %c, %o : !fetch.stream<main, [32], [32], f32>, memref<32x32xf32>
  func.return
}

// -----

func.func @lookup_changes_packet(%w: memref<64x16xf4E2M1FN>, %o: memref<64x16xf8E4M3FN>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.table_lookup' op changes the stream shape from time [64] packet [16] to time [64] packet [8, 2]; adapter stages keep the shape}}
  %d = fetch.table_lookup %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [8, 2], f8E4M3FN>
  rngd.commit %d, %o : !fetch.stream<main, [64], [8, 2], f8E4M3FN>, memref<64x16xf8E4M3FN>
  func.return
}

// -----

func.func @zp_changes_time(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<32x64xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op changes the stream shape from time [64] packet [32] to time [2, 32] packet [32]}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [2, 32], [32], i9>
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [2, 32], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [2, 32], [32], i32>
  rngd.commit %r, %o : !fetch.stream<main, [2, 32], [32], i32>, memref<32x64xi32>
  func.return
}

// -----

func.func @cast_changes_context(%a: memref<64x16xf8E4M3FN>, %o: memref<64x16xf32>) {
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  // expected-error @+1 {{'fetch.cast' op changes the stream context from main to sub; adapter stages keep the context}}
  %c = fetch.cast %s : !fetch.stream<main, [64], [16], f8E4M3FN> -> !fetch.stream<sub, [64], [16], f32>
  rngd.commit %c, %o : !fetch.stream<sub, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// -----

func.func @convert_changes_shape(%a: memref<64x16xf8E5M2>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %a : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  // expected-error @+1 {{'fetch.convert' op changes the stream shape from time [64] packet [16] to time [1024] packet [1]; adapter stages keep the shape}}
  %b = fetch.convert %s : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [1024], [1], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [1024], [1], bf16>, memref<64x16xbf16>
  func.return
}

// -----

func.func @fetch_element_differs(%a: memref<64x16xf8E4M3FN>, %o: memref<64x16xf8E5M2>) {
  // expected-error @+1 {{'fetch.fetch' op result element type f8E5M2 differs from the memref's f8E4M3FN; fetch.fetch reads elements unchanged, convert them with adapter stages}}
  %s = fetch.fetch %a : memref<64x16xf8E4M3FN> -> !fetch.stream<main, [64], [16], f8E5M2>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xf8E5M2>
  func.return
}

// -----

func.func @fetch_widens(%a: memref<64x16xi8>, %o: memref<64x16xi32>) {
  // expected-error @+1 {{'fetch.fetch' op result element type i32 differs from the memref's i8}}
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i32>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i32>, memref<64x16xi32>
  func.return
}

// -----

func.func @switch_changes_type(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  // expected-error @+1 {{'rngd.switch' op passes a stream through unchanged, but its result type !fetch.stream<main, [16], [64], i8> differs from its input !fetch.stream<main, [64], [16], i8>}}
  %w = rngd.switch %s : !fetch.stream<main, [64], [16], i8> -> !fetch.stream<main, [16], [64], i8>
  rngd.commit %w, %o : !fetch.stream<main, [16], [64], i8>, memref<64x16xi8>
  func.return
}

// -----

func.func @commit_element_differs(%a: memref<64x16xi8>, %o: memref<64x16xi16>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  // expected-error @+1 {{'rngd.commit' op the memref's element type i16 differs from the stream's i8; this engine does not convert elements}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi16>
  func.return
}

// -----

func.func @commit_size_differs(%a: memref<64x16xi8>, %o: memref<64x8xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  // expected-error @+1 {{'rngd.commit' op writes 1024 elements into a memref of 512; the sizes must match}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x8xi8>
  func.return
}

// -----

func.func @transpose_count_differs(%a: memref<64x16xf32>, %o: memref<16x32xf32>) {
  %s = fetch.fetch %a : memref<64x16xf32> -> !fetch.stream<main, [64], [16], f32>
  // expected-error @+1 {{'rngd.transpose' op turns 1024 elements into 512; a transpose keeps the element count}}
  %t = rngd.transpose %s : !fetch.stream<main, [64], [16], f32> -> !fetch.stream<main, [16], [32], f32>
  rngd.commit %t, %o : !fetch.stream<main, [16], [32], f32>, memref<16x32xf32>
  func.return
}

// -----

func.func @to_trf_element_differs(%a: memref<64x16xbf16>) -> !rngd.trf<f32> {
  %s = fetch.fetch %a : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  // expected-error @+1 {{'rngd.to_trf' op result element type f32 differs from the stream's bf16; this engine does not convert elements}}
  %t = rngd.to_trf %s : !fetch.stream<main, [64], [16], bf16> -> !rngd.trf<f32>
  func.return %t : !rngd.trf<f32>
}

// -----

func.func @contract_accumulator(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xf32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.contract_outer' op accumulates i8 into i32, not f32}}
  %r = rngd.contract_outer %q, %t : !fetch.stream<main, [64], [32], i8>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %r, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @block_scale_shape(%a: memref<64x32xf32>, %b: memref<64x4xf32>, %o: memref<64x32xf32>) {
  %x = fetch.fetch %a : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  %s = fetch.fetch %b : memref<64x4xf32> -> !fetch.stream<main, [64], [4], f32>
  // expected-error @+1 {{'rngd.block_scale' op the scale stream must have time [64] and packet [2] (one scale per block of 16), not time [64] packet [4]}}
  %y = rngd.block_scale %x, %s {block = 16 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [4], f32> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// ir.md §3 rule 6: every stream value has exactly one use; an unused stream,
// or one used twice, is an error at the op that defines it (notes at the uses).
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: each stream consumed once; a memref may be read by many fetches.
func.func @once_each(%a: memref<64x32xi8>, %o1: memref<64x32xi8>, %o2: memref<64x32xi8>) {
  %s1 = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  rngd.commit %s1, %o1 : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  %s2 = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  rngd.commit %s2, %o2 : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

// -----

func.func @unused_fetch(%a: memref<64x32xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream is never used: every stream must be consumed exactly once (by an adapter stage, an rngd engine op, or rngd.commit)}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  func.return
}

// -----

func.func @unused_stage(%a: memref<64x8xbf16>) {
  %s = fetch.fetch %a : memref<64x8xbf16> -> !fetch.stream<main, [64], [8], bf16>
  // expected-error @+1 {{'fetch.cast' op its result stream is never used}}
  %f = fetch.cast %s : !fetch.stream<main, [64], [8], bf16> -> !fetch.stream<main, [64], [8], f32>
  func.return
}

// -----

// The accumulator stream of the Contraction Engine is a stream too.
func.func @unused_accumulator(%a: memref<64x32xi8>, %t: !rngd.trf<i8>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.contract_outer' op its result stream is never used}}
  %r = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  func.return
}

// -----

func.func @used_twice(%a: memref<64x32xi8>, %o1: memref<64x32xi8>, %o2: memref<64x32xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream has 2 uses, but a stream is linear and must be consumed exactly once; fetch the tensor again for a second consumer}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{used here}}
  rngd.commit %s, %o1 : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  // expected-note @+1 {{used here}}
  rngd.commit %s, %o2 : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

// -----

func.func @used_three_times(%a: memref<64x8xf8E4M3FN>, %o1: memref<64x8xf32>, %o2: memref<64x8xbf16>) -> !rngd.trf<f8E4M3FN> {
  // expected-error @+1 {{'fetch.fetch' op its result stream has 3 uses}}
  %s = fetch.fetch %a : memref<64x8xf8E4M3FN> -> !fetch.stream<main, [64], [8], f8E4M3FN>
  // expected-note @+1 {{used here}}
  %f = fetch.cast %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], f32>
  rngd.commit %f, %o1 : !fetch.stream<main, [64], [8], f32>, memref<64x8xf32>
  // expected-note @+1 {{used here}}
  %b = fetch.table_lookup %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !fetch.stream<main, [64], [8], bf16>
  rngd.commit %b, %o2 : !fetch.stream<main, [64], [8], bf16>, memref<64x8xbf16>
  // expected-note @+1 {{used here}}
  %t = rngd.to_trf %s : !fetch.stream<main, [64], [8], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// -----

// Twice by one op.
func.func @twice_by_one_op(%a: memref<64x32xf32>, %o: memref<64x32xf32>) {
  // expected-error @+1 {{'fetch.fetch' op its result stream has 2 uses}}
  %s = fetch.fetch %a : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  // expected-note @+1 {{used here twice}}
  %b = rngd.block_scale %s, %s {block = 1 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [32], f32> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %b, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}


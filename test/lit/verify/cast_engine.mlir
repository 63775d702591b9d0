// The Cast Engine's narrowing, rngd.cast (hardware.md §2.6): f32 -> bf16
// only, the same context, time and packet shape. Another input, another
// output or another shape is an error that lists what the Cast Engine takes.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %s 2>&1 | FileCheck %s

// Valid: after the Vector Engine, and straight from the adapter (the adapter's
// one cast stage is spent on f8E4M3FN -> f32 in an e2m1 decode to bf16), on
// either Fetch Unit.
func.func @valid(%x: memref<64x32xf32>, %g: f32, %w: memref<64x32xf4E2M1FN>, %s: memref<64x32xf32>,
                 %o: memref<64x32xbf16>, %p: memref<64x32xbf16>, %q: memref<64x32xbf16>) {
  %f = fetch.fetch %x : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  %t = rngd.tensor_scale %f, %g : !fetch.stream<main, [64], [32], f32>, f32 -> !fetch.stream<main, [64], [32], f32>
  %n = rngd.cast %t : !fetch.stream<main, [64], [32], f32> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  %c = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %d = fetch.table_lookup %c : !fetch.stream<main, [64], [32], f4E2M1FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  %e = fetch.cast %d : !fetch.stream<main, [64], [32], f8E4M3FN> -> !fetch.stream<main, [64], [32], f32>
  %m = rngd.cast %e : !fetch.stream<main, [64], [32], f32> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %m, %p : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  %u = fetch.fetch %s : memref<64x32xf32> -> !fetch.stream<sub, [64], [32], f32>
  %v = rngd.cast %u : !fetch.stream<sub, [64], [32], f32> -> !fetch.stream<sub, [64], [32], bf16>
  rngd.commit %v, %q : !fetch.stream<sub, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

// -----

// CHECK: cast_engine.mlir:[[# @LINE + 5]]:8: error: 'rngd.cast' op narrows i32, but the Cast Engine takes f32 -> bf16 only: give it an f32 stream (a Vector Engine result, or widen with fetch.cast in the adapter)
func.func @not_f32(%x: memref<64x32xi8>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %x : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %c = fetch.cast %s : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i32>
  // expected-error @+1 {{'rngd.cast' op narrows i32, but the Cast Engine takes f32 -> bf16 only: give it an f32 stream (a Vector Engine result, or widen with fetch.cast in the adapter)}}
  %n = rngd.cast %c : !fetch.stream<main, [64], [32], i32> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

// -----

// A bf16 stream does not narrow again, nor widen here.
func.func @bf16_in(%x: memref<64x32xbf16>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %x : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  // expected-error @+1 {{'rngd.cast' op narrows bf16, but the Cast Engine takes f32 -> bf16 only}}
  %n = rngd.cast %s : !fetch.stream<main, [64], [32], bf16> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %n, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// CHECK: cast_engine.mlir:[[# @LINE + 4]]:8: error: 'rngd.cast' op narrows f32 to f8E4M3FN, but the Cast Engine takes f32 -> bf16 only
func.func @to_f8(%x: memref<64x32xf32>, %o: memref<64x32xf8E4M3FN>) {
  %s = fetch.fetch %x : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  // expected-error @+1 {{'rngd.cast' op narrows f32 to f8E4M3FN, but the Cast Engine takes f32 -> bf16 only}}
  %n = rngd.cast %s : !fetch.stream<main, [64], [32], f32> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  rngd.commit %n, %o : !fetch.stream<main, [64], [32], f8E4M3FN>, memref<64x32xf8E4M3FN>
  func.return
}

// -----

func.func @shape(%x: memref<64x32xf32>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %x : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  // expected-error @+1 {{'rngd.cast' op changes the stream from !fetch.stream<main, [64], [32], f32> to !fetch.stream<main, [32], [64], bf16>; the Cast Engine keeps the context and shapes and changes only the element type: write -> !fetch.stream<main, [64], [32], bf16>}}
  %n = rngd.cast %s : !fetch.stream<main, [64], [32], f32> -> !fetch.stream<main, [32], [64], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [32], [64], bf16>, memref<64x32xbf16>
  func.return
}

// -----

func.func @context(%x: memref<64x32xf32>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %x : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  // expected-error @+1 {{'rngd.cast' op changes the stream from !fetch.stream<main, [64], [32], f32> to !fetch.stream<sub, [64], [32], bf16>}}
  %n = rngd.cast %s : !fetch.stream<main, [64], [32], f32> -> !fetch.stream<sub, [64], [32], bf16>
  rngd.commit %n, %o : !fetch.stream<sub, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

// -----

// Rule 3 first: i9 reaches only the Contraction Engine.
func.func @i9(%a: memref<64x32xi8>, %o: memref<64x32xbf16>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.cast' op cannot narrow an i9 stream in the Cast Engine: i9 is the Contraction Engine's staging type}}
  %n = rngd.cast %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %n, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

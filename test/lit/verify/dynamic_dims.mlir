// A dynamic dimension is spelled `?` in every message, as MLIR prints it, never
// xDSL's placeholder number (-9223372036854775808, or a product of it); each op
// says that DM tensors have static shapes.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p ''
// RUN: not %fetchc %s --split-input-file -p '' --emit=mlir 2>&1 | FileCheck %s
// RUN: not %fetchc %s --split-input-file -p '' --emit=mlir 2>&1 | not grep -e 9223372036854775808 -e 147573952589676412928
// CHECK: error: 'fetch.fetch' op dynamic memref shapes are not supported: DM tensors have static shapes, not ?x32
// CHECK: error: 'fetch.dequant' op dynamic memref shapes are not supported: DM tensors have static shapes, not ?x32
// CHECK: error: 'rngd.commit' op dynamic memref shapes are not supported: DM tensors have static shapes, not ?x32

func.func @codes(%w: memref<?x32xf4E2M1FN>, %s: memref<?x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  // expected-error @+1 {{'fetch.fetch' op dynamic memref shapes are not supported: DM tensors have static shapes, not ?x32}}
  %c = fetch.fetch %w : memref<?x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op dynamic memref shapes are not supported: DM tensors have static shapes, not ?x32}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<?x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @dest(%w: memref<64x32xi8>, %o: memref<?x32xi8>) {
  %c = fetch.fetch %w : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.commit' op dynamic memref shapes are not supported: DM tensors have static shapes, not ?x32}}
  rngd.commit %c, %o : !fetch.stream<main, [64], [32], i8>, memref<?x32xi8>
  func.return
}

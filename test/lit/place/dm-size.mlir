// fetch-place-dm{dm-size=N} (default and at most 524288, one slice's DM): a kernel whose tensors do
// not fit is an error naming the tensor that overflows and the bytes it needs, and, when the
// kernel's tensors exceed the DM, the bytes one slice needs and the rngd.slices / rngd.slice_dim
// that would make it fit (ir.md §2a).
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-place-dm
// RUN: not %fetchc %s --split-input-file -p fetch-place-dm --emit=mlir 2>&1 | FileCheck %s
// RUN: not %fetchc %s -p 'fetch-place-dm{dm-size=524289}' 2>&1 | FileCheck %s --check-prefix=BIG
// BIG: error: invalid pass pipeline 'fetch-place-dm{dm-size=524289}': dm-size must be a number of bytes from 1 to 2^19 = 524288 (one slice's DM), not 524289

// A 4096 x 4096 NVFP4 weight (8 MiB codes, 1 MiB scales, 64 MiB f32) does not fit one slice's
// 512 KiB of DM: the error says how many bytes one slice needs and which rngd.slices and
// rngd.slice_dim make it fit (256 slices, 16 rows each: 299008 bytes; 128 would need 598016).
// CHECK: dm-size.mlir:[[# @LINE + 2]]:1: error: 'func.func' op placing %w (8388608 bytes) at 0x0 needs 8388608 bytes of DM, but dm-size is 524288 (one slice's DM): one slice needs 76546048 bytes for the tensors of @dq: split them over slices with {rngd.slices = 256 : i64} on the function and {rngd.slice_dim = 0 : i64} on %w, %bs, %out, each memref's split dimension divided by 256: one slice then needs 299008 bytes (ir.md §2a)
// expected-error @+1 {{'func.func' op placing %w (8388608 bytes) at 0x0 needs 8388608 bytes of DM, but dm-size is 524288 (one slice's DM): one slice needs 76546048 bytes for the tensors of @dq: split them over slices with {rngd.slices = 256 : i64} on the function and {rngd.slice_dim = 0 : i64} on %w, %bs, %out, each memref's split dimension divided by 256: one slice then needs 299008 bytes (ir.md §2a)}}
func.func @dq(%w: memref<4096x4096xf4E2M1FN>, %bs: memref<4096x256xf8E4M3FN>, %g: f32, %out: memref<4096x4096xf32>) {
  %c = fetch.fetch %w {map = affine_map<(o, p, e) -> (o, p * 64 + e)>} : memref<4096x4096xf4E2M1FN> -> !fetch.stream<main, [4096, 64], [64], f4E2M1FN>
  %d = fetch.dequant %c, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [4096, 64], [64], f4E2M1FN>, memref<4096x256xf8E4M3FN>, f32 -> !fetch.stream<main, [4096, 64], [64], f32>
  rngd.commit %d, %out : !fetch.stream<main, [4096, 64], [64], f32>, memref<4096x4096xf32>
  func.return
}

// -----

// A first tensor too large is reported too; %x (2 rows) cannot be split by 128 and stays whole.
// expected-error @+1 {{'func.func' op placing %big (33554432 bytes) at 0x0 needs 33554432 bytes of DM, but dm-size is 524288 (one slice's DM): one slice needs 33554464 bytes for the tensors of @first: split them over slices with {rngd.slices = 128 : i64} on the function and {rngd.slice_dim = 0 : i64} on %big, each memref's split dimension divided by 128: one slice then needs 262176 bytes (ir.md §2a)}}
func.func @first(%big: memref<4096x8192xi8>, %x: memref<2x16xi8>) {
  %s = fetch.fetch %x : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  %t = rngd.to_trf %s : !fetch.stream<main, [2], [16], i8> -> !rngd.trf<i8>
  func.return
}

// -----

// Explicit placements must fit one slice's DM too.
// expected-error @+1 {{'func.func' op placing %x (32 bytes) at 0x80000 (its rngd.dm_base) needs 524320 bytes of DM, but dm-size is 524288 (one slice's DM): lower its address}}
func.func @explicit(%w: memref<2x16xi8>, %x: memref<2x16xi8> {rngd.dm_base = 524288 : i64}) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// A kernel on 4 slices already: the suggestion doubles them, along each tensor's own slice_dim.
// expected-error @+1 {{'func.func' op placing %x (524288 bytes) at 0x20000 needs 655360 bytes of DM, but dm-size is 524288 (one slice's DM): one slice needs 655360 bytes for the tensors of @sliced: split them over slices with {rngd.slices = 8 : i64} on the function and {rngd.slice_dim = 1 : i64} on %w, %x, each memref's split dimension divided by 2: one slice then needs 327680 bytes (ir.md §2a)}}
func.func @sliced(%w: memref<128x1024xi8> {rngd.slice_dim = 1 : i64}, %x: memref<128x1024xi32> {rngd.slice_dim = 1 : i64}) attributes {rngd.slices = 4 : i64} {
  %s = fetch.fetch %w : memref<128x1024xi8> -> !fetch.stream<main, [128], [1024], i8>
  %c = fetch.cast %s : !fetch.stream<main, [128], [1024], i8> -> !fetch.stream<main, [128], [1024], i32>
  rngd.commit %c, %x : !fetch.stream<main, [128], [1024], i32>, memref<128x1024xi32>
  func.return
}

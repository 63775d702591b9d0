// fetch-place-dm{dm-size=N}: a kernel whose tensors do not fit N bytes of DM
// is an error naming the tensor that overflows and the bytes it needs.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p 'fetch-place-dm{dm-size=16777216}'
// RUN: not %fetchc %s --split-input-file -p 'fetch-place-dm{dm-size=16777216}' --emit=mlir 2>&1 | FileCheck %s

// A 4096 x 4096 NVFP4 weight: codes 8 MiB at 0x0, block scales 1 MiB at
// 0x800000, then the 64 MiB f32 result at 0x900000 does not fit 16 MiB.
// CHECK: dm-size.mlir:[[# @LINE + 2]]:1: error: 'func.func' op placing %out (67108864 bytes) at 0x900000 needs 76546048 bytes of DM, but dm-size is 16777216 (raise dm-size)
// expected-error @+1 {{'func.func' op placing %out (67108864 bytes) at 0x900000 needs 76546048 bytes of DM, but dm-size is 16777216 (raise dm-size)}}
func.func @dq(%w: memref<4096x4096xf4E2M1FN>, %bs: memref<4096x256xf8E4M3FN>, %g: f32, %out: memref<4096x4096xf32>) {
  %c = fetch.fetch %w {map = affine_map<(o, p, e) -> (o, p * 64 + e)>} : memref<4096x4096xf4E2M1FN> -> !fetch.stream<main, [4096, 64], [64], f4E2M1FN>
  %d = fetch.dequant %c, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [4096, 64], [64], f4E2M1FN>, memref<4096x256xf8E4M3FN>, f32 -> !fetch.stream<main, [4096, 64], [64], f32>
  rngd.commit %d, %out : !fetch.stream<main, [4096, 64], [64], f32>, memref<4096x4096xf32>
  func.return
}

// -----

// The 8 MiB codes alone fit 16 MiB; a first tensor too large is reported too.
// expected-error @+1 {{'func.func' op placing %big (33554432 bytes) at 0x0 needs 33554432 bytes of DM, but dm-size is 16777216 (raise dm-size)}}
func.func @first(%big: memref<4096x8192xi8>, %x: memref<2x16xi8>) {
  %s = fetch.fetch %x : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  %t = rngd.to_trf %s : !fetch.stream<main, [2], [16], i8> -> !rngd.trf<i8>
  func.return
}

// -----

// Explicit placements must fit dm-size too.
// expected-error @+1 {{'func.func' op placing %x (32 bytes) at 0x1000000 (its rngd.dm_base) needs 16777248 bytes of DM, but dm-size is 16777216 (raise dm-size or lower its address)}}
func.func @explicit(%w: memref<2x16xi8>, %x: memref<2x16xi8> {rngd.dm_base = 16777216 : i64}) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

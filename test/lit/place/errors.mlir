// fetch-place-dm's located errors (ir.md §2a): disagreeing addresses (error
// at the later op, note at the first), an explicit rngd.dm_base that a fetch
// or dequant contradicts (note at the function), memrefs that are not
// function arguments, bad rngd.dm_base values, and tensors outside dm-size.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-place-dm
// Every error exits 1 and writes nothing.
// RUN: not %fetchc %s --split-input-file -p fetch-place-dm --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out
// The default pipeline runs the pass first: the same error stops the compile.
// RUN: not %fetchc %s --split-input-file --emit=seq -o %t.seq 2>&1 | FileCheck %s
// RUN: not test -e %t.seq

// Two fetches of one tensor at different addresses.
// CHECK: errors.mlir:[[# @LINE + 6]]:8: error: 'fetch.fetch' op base 128 (0x80) disagrees with the first address given for %w, base 64 (0x40) on 'fetch.fetch'
// CHECK: errors.mlir:[[# @LINE + 2]]:8: note: %w is first read at 0x40 here
func.func @two_bases(%w: memref<2x16xi8>, %x: memref<2x16xi8>, %y: memref<2x16xi8>) {
  %s = fetch.fetch %w {base = 64 : i64} : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8> // expected-note {{%w is first read at 0x40 here}}
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  // expected-error @+1 {{'fetch.fetch' op base 128 (0x80) disagrees with the first address given for %w, base 64 (0x40) on 'fetch.fetch': a tensor has one DM address; use the same address everywhere, or drop it and let fetch-place-dm place the tensor}}
  %t = fetch.fetch %w {base = 128 : i64} : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %t, %y : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// A dequant's scale_base against a plain fetch of the same scale memref.
func.func @scale_base_vs_fetch(%w: memref<16x32xf4E2M1FN>, %s: memref<16x2xf8E4M3FN>, %g: f32,
                               %o: memref<16x32xf32>, %o2: memref<16x2xf8E4M3FN>) {
  %r = fetch.fetch %s {base = 1024 : i64} : memref<16x2xf8E4M3FN> -> !fetch.stream<main, [16], [2], f8E4M3FN> // expected-note {{%s is first read at 0x400 here}}
  rngd.commit %r, %o2 : !fetch.stream<main, [16], [2], f8E4M3FN>, memref<16x2xf8E4M3FN>
  %c = fetch.fetch %w : memref<16x32xf4E2M1FN> -> !fetch.stream<main, [16], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op scale_base 2048 (0x800) disagrees with the first address given for %s, base 1024 (0x400) on 'fetch.fetch'}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 2048 : i64} : !fetch.stream<main, [16], [32], f4E2M1FN>, memref<16x2xf8E4M3FN>, f32 -> !fetch.stream<main, [16], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [16], [32], f32>, memref<16x32xf32>
  func.return
}

// -----

// An explicit rngd.dm_base that the fetch's base contradicts: the error is at
// the fetch, the note at the function that carries the attribute.
// CHECK: errors.mlir:[[# @LINE + 4]]:8: error: 'fetch.fetch' op base 64 (0x40) disagrees with %w's rngd.dm_base = 4096 (0x1000): a tensor has one DM address; drop the base or make them agree
// CHECK: errors.mlir:[[# @LINE + 2]]:1: note: %w is placed at 0x1000 by its rngd.dm_base attribute
// expected-note @+1 {{%w is placed at 0x1000 by its rngd.dm_base attribute}}
func.func @explicit_vs_base(%w: memref<2x16xi8> {rngd.dm_base = 4096 : i64}, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w {base = 64 : i64} : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8> // expected-error {{'fetch.fetch' op base 64 (0x40) disagrees with %w's rngd.dm_base = 4096 (0x1000): a tensor has one DM address; drop the base or make them agree}}
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// ... and the same for a dequant's scale_base.
// expected-note @+1 {{%s is placed at 0x100 by its rngd.dm_base attribute}}
func.func @explicit_vs_scale_base(%w: memref<16x32xf4E2M1FN>, %s: memref<16x2xf8E4M3FN> {rngd.dm_base = 256 : i64},
                                  %g: f32, %o: memref<16x32xf32>) {
  %c = fetch.fetch %w : memref<16x32xf4E2M1FN> -> !fetch.stream<main, [16], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op scale_base 512 (0x200) disagrees with %s's rngd.dm_base = 256 (0x100)}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4", scale_base = 512 : i64} : !fetch.stream<main, [16], [32], f4E2M1FN>, memref<16x2xf8E4M3FN>, f32 -> !fetch.stream<main, [16], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [16], [32], f32>, memref<16x32xf32>
  func.return
}

// -----

// A fetch of a memref.alloc: not a function argument, so it has no DM address.
// CHECK: errors.mlir:[[# @LINE + 4]]:8: error: 'fetch.fetch' op reads a memref that is not an argument of @alloc (it is the result of 'memref.alloc'); only function arguments are placed in DM: pass it in as a function argument
// CHECK: errors.mlir:[[# @LINE + 2]]:8: note: the memref is defined here
func.func @alloc(%x: memref<2x16xi8>) {
  %a = memref.alloc() : memref<2x16xi8> // expected-note {{the memref is defined here}}
  %s = fetch.fetch %a : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8> // expected-error {{'fetch.fetch' op reads a memref that is not an argument of @alloc (it is the result of 'memref.alloc'); only function arguments are placed in DM: pass it in as a function argument}}
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// A fetch of a memref.subview of an argument: pass the view in instead (a
// strided<> argument, see examples/tiling_read.mlir).
func.func @subview(%m: memref<8x16xi8>, %x: memref<2x16xi8>) {
  %v = memref.subview %m[2, 0] [2, 16] [1, 1] : memref<8x16xi8> to memref<2x16xi8, strided<[16, 1], offset: 32>> // expected-note {{the memref is defined here}}
  // expected-error @+1 {{'fetch.fetch' op reads a memref that is not an argument of @subview (it is the result of 'memref.subview'); only function arguments are placed in DM: pass it in as a function argument}}
  %s = fetch.fetch %v : memref<2x16xi8, strided<[16, 1], offset: 32>> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// Block scales in a memref.alloc.
func.func @dequant_alloc(%w: memref<16x32xf4E2M1FN>, %g: f32, %o: memref<16x32xf32>) {
  %s = memref.alloc() : memref<16x2xf8E4M3FN> // expected-note {{the memref is defined here}}
  %c = fetch.fetch %w : memref<16x32xf4E2M1FN> -> !fetch.stream<main, [16], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op reads its block scales from a memref that is not an argument of @dequant_alloc (it is the result of 'memref.alloc'); only function arguments are placed in DM: pass it in as a function argument}}
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [16], [32], f4E2M1FN>, memref<16x2xf8E4M3FN>, f32 -> !fetch.stream<main, [16], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [16], [32], f32>, memref<16x32xf32>
  func.return
}

// -----

// A commit into a memref.alloc.
func.func @commit_alloc(%w: memref<2x16xi8>) {
  %a = memref.alloc() : memref<2x16xi8> // expected-note {{the memref is defined here}}
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  // expected-error @+1 {{'rngd.commit' op commits to a memref that is not an argument of @commit_alloc (it is the result of 'memref.alloc'); only function arguments are placed in DM: pass it in as a function argument}}
  rngd.commit %s, %a : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// rngd.dm_base must be an 8-byte-aligned address (hardware.md §3).
// expected-error @+1 {{'func.func' op rngd.dm_base = 12 of %w is not a DM byte address that is a multiple of 8 (a fetch's base is 8-byte aligned, hardware.md §3)}}
func.func @misaligned(%w: memref<2x16xi8> {rngd.dm_base = 12 : i64}, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// expected-error @+1 {{'func.func' op rngd.dm_base = -64 of %x is not a DM byte address that is a multiple of 8}}
func.func @negative(%w: memref<2x16xi8>, %x: memref<2x16xi8> {rngd.dm_base = -64 : i64}) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// expected-error @+1 {{'func.func' op rngd.dm_base of %w must be an integer DM byte address (e.g. {rngd.dm_base = 4096 : i64}), not "0x100"}}
func.func @not_integer(%w: memref<2x16xi8> {rngd.dm_base = "0x100"}, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// Only memrefs live in DM.
// expected-error @+1 {{'func.func' op rngd.dm_base on %g, which is f32, not a memref: only memref arguments live in DM}}
func.func @scalar(%w: memref<2x16xi8>, %g: f32 {rngd.dm_base = 64 : i64}, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// A memref argument with no DM layout (a dynamic shape) cannot be placed.
// expected-error @+1 {{'func.func' op cannot place %d (memref<?xi8>) in DM: dynamic memref shapes are not supported: DM tensors have static shapes}}
func.func @dynamic(%w: memref<2x16xi8>, %x: memref<2x16xi8>, %d: memref<?xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// An explicit placement past the end of one slice's DM: 0x7fff0 + 32 bytes.
// expected-error @+1 {{'func.func' op placing %x (32 bytes) at 0x7fff0 (its rngd.dm_base) needs 524304 bytes of DM, but dm-size is 524288 (one slice's DM): lower its address}}
func.func @explicit_overflow(%w: memref<2x16xi8>, %x: memref<2x16xi8> {rngd.dm_base = 524272 : i64}) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// -----

// A fetch's base that puts its tensor past the end of DM: the error is at the
// fetch whose base placed it.
func.func @inferred_overflow(%w: memref<2x16xi8>, %x: memref<2x16xi8>) {
  // expected-error @+1 {{'fetch.fetch' op placing %w (32 bytes) at 0x7fff8 (the base of this op) needs 524312 bytes of DM, but dm-size is 524288 (one slice's DM): lower its address}}
  %s = fetch.fetch %w {base = 524280 : i64, map = affine_map<(t, p) -> (0, t * 8 + p)>} : memref<2x16xi8> -> !fetch.stream<main, [1], [8], i8>
  %t = fetch.fetch %x {base = 0 : i64} : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  %u = rngd.to_trf %s : !fetch.stream<main, [1], [8], i8> -> !rngd.trf<i8>
  %v = rngd.to_trf %t : !fetch.stream<main, [2], [16], i8> -> !rngd.trf<i8>
  func.return
}

// -----

// No room after an explicit placement at the top of DM: the placed tensors go
// after the highest byte taken, so %x does not fit.
// expected-error @+1 {{'func.func' op placing %x (32 bytes) at 0x80000 needs 524320 bytes of DM, but dm-size is 524288 (one slice's DM): fetch-place-dm places tensors after the highest byte that the kernel's own addresses take, 0x7ffff; give %x an explicit rngd.dm_base}}
func.func @no_room(%w: memref<2x16xi8> {rngd.dm_base = 524256 : i64}, %x: memref<2x16xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %x : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8>
  func.return
}

// fetch-place-dm (ir.md §2a) places kernel tensors: rngd.dm_base first, then
// the fetches' base / dequants' scale_base, then the rest in argument order at
// the next 64-byte boundary after the highest byte taken.  Afterwards every
// memref argument carries rngd.dm_base and every fetch / dequant its address.

// The programs read from the placed addresses.
// RUN: %fetchc %s -o %t.bin
// RUN: %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// The placement in the IR, right after the pass (the dequant still there).
// RUN: %fetchc %s -p fetch-place-dm --emit=mlir | FileCheck %s --check-prefix=IR

// Round trip: the placed IR prints, parses back and prints the same; placing
// it again changes nothing; it compiles to the same bytes.
// RUN: %fetchc %s -p fetch-place-dm --emit=mlir -o %t.placed.mlir
// RUN: %fetchc %t.placed.mlir -p '' --emit=mlir -o %t.reparsed.mlir
// RUN: diff %t.placed.mlir %t.reparsed.mlir
// RUN: %fetchc %t.placed.mlir -p fetch-place-dm --emit=mlir -o %t.replaced.mlir
// RUN: diff %t.placed.mlir %t.replaced.mlir
// RUN: %fetchc %t.placed.mlir -o %t.again.bin
// RUN: %python %S/../Inputs/same_seqbin.py %t.bin %t.again.bin | FileCheck %s --check-prefix=SAME
// SAME: same
// The generic form keeps the argument attributes in func.func's arg_attrs and
// parses back to the same IR.
// RUN: %fetchc %s -p fetch-place-dm --emit=mlir --print-op-generic -o %t.generic.mlir
// RUN: FileCheck %s --check-prefix=GENERIC < %t.generic.mlir
// RUN: %fetchc %t.generic.mlir -p '' --emit=mlir -o %t.fromgeneric.mlir
// RUN: diff %t.placed.mlir %t.fromgeneric.mlir
// The default --emit=mlir pipeline (which runs the pass first) keeps them.
// RUN: %fetchc %s --emit=mlir | FileCheck %s --check-prefix=EMIT

// @plain: nothing given.  %a: 1000 bytes at 0x0; %b: 16 x 16 bf16 = 512
// bytes at the next 64-byte boundary, 1024 = 0x400; %c: 512 bytes at 0x600.
// %g is a scalar: not in DM.
// IR-LABEL: func.func @plain(%a: memref<1000xi8> {rngd.dm_base = 0 : i64, rngd.name = "a"}, %b: memref<16x16xbf16> {rngd.dm_base = 1024 : i64, rngd.name = "b"}, %g: f32 {rngd.name = "g"}, %c: memref<16x16xbf16> {rngd.dm_base = 1536 : i64, rngd.name = "c"})
// IR-NEXT:    fetch.fetch %a {base = 0 : i64, map =
// IR:         fetch.fetch %b {base = 1024 : i64}
// DIS:      program 0: "plain/0"
// DIS:        base: 0x0 (0)
// DIS:      program 1: "plain/1"
// DIS:        base: 0x400 (1024)
// EMIT-LABEL: func.func @plain(%a: memref<1000xi8> {rngd.dm_base = 0 : i64, rngd.name = "a"}, %b: memref<16x16xbf16> {rngd.dm_base = 1024 : i64, rngd.name = "b"}, %g: f32 {rngd.name = "g"}, %c: memref<16x16xbf16> {rngd.dm_base = 1536 : i64, rngd.name = "c"})
// GENERIC:    sym_name = "plain", function_type = (memref<1000xi8>, memref<16x16xbf16>, f32, memref<16x16xbf16>) -> (), arg_attrs = [{rngd.dm_base = 0 : i64, rngd.name = "a"}, {rngd.dm_base = 1024 : i64, rngd.name = "b"}, {rngd.name = "g"}, {rngd.dm_base = 1536 : i64, rngd.name = "c"}]
func.func @plain(%a: memref<1000xi8>, %b: memref<16x16xbf16>, %g: f32, %c: memref<16x16xbf16>) {
  %s = fetch.fetch %a {map = affine_map<(t, p) -> (t * 8 + p)>} : memref<1000xi8> -> !fetch.stream<main, [125], [8], i8>
  %t = rngd.to_trf %s : !fetch.stream<main, [125], [8], i8> -> !rngd.trf<i8>
  %u = fetch.fetch %b : memref<16x16xbf16> -> !fetch.stream<main, [16], [16], bf16>
  rngd.commit %u, %c : !fetch.stream<main, [16], [16], bf16>, memref<16x16xbf16>
  func.return
}

// @mixed: %a explicit at 4096 (64 bytes); %b at 256 from its first fetch's
// base (the second fetch, with no base, gets it too).  The highest byte taken
// is 4096 + 63, so %c goes to 4160 and %d to 4224; nothing is placed in the
// free gap below 4096.
// IR-LABEL: func.func @mixed(%a: memref<4x16xi8> {rngd.dm_base = 4096 : i64, rngd.name = "a"}, %b: memref<4x16xi8> {rngd.dm_base = 256 : i64, rngd.name = "b"}, %c: memref<4x16xi8> {rngd.dm_base = 4160 : i64, rngd.name = "c"}, %d: memref<4x16xi8> {rngd.dm_base = 4224 : i64, rngd.name = "d"})
// IR-NEXT:    fetch.fetch %a {base = 4096 : i64}
// IR:         fetch.fetch %b {base = 256 : i64}
// IR:         fetch.fetch %b {base = 256 : i64}
// IR:         fetch.fetch %c {base = 4160 : i64}
// DIS:      program 2: "mixed/0"
// DIS:        base: 0x1000 (4096)
// DIS:      program 3: "mixed/1"
// DIS:        base: 0x100 (256)
// DIS:      program 4: "mixed/2"
// DIS:        base: 0x100 (256)
// DIS:      program 5: "mixed/3"
// DIS:        base: 0x1040 (4160)
func.func @mixed(%a: memref<4x16xi8> {rngd.dm_base = 4096 : i64}, %b: memref<4x16xi8>, %c: memref<4x16xi8>, %d: memref<4x16xi8>) {
  %sa = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  %ta = rngd.to_trf %sa : !fetch.stream<main, [4], [16], i8> -> !rngd.trf<i8>
  %sb = fetch.fetch %b {base = 256 : i64} : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  %tb = rngd.to_trf %sb : !fetch.stream<main, [4], [16], i8> -> !rngd.trf<i8>
  %sb2 = fetch.fetch %b : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %tb2 = rngd.to_trf %sb2 : !fetch.stream<sub, [4], [16], i8> -> !rngd.trf<i8>
  %sc = fetch.fetch %c : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %sc, %d : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  func.return
}

// @dequant: the block scales get their address from placement, written as
// the dequant's scale_base; the scale fetch that fetch-split-scaling inserts
// reads from it.  %w: 16 x 32 codes = 256 bytes at 0x0; %s: 32 bytes at
// 0x100; %o at 0x140.
// IR-LABEL: func.func @dequant(%w: memref<16x32xf4E2M1FN> {rngd.dm_base = 0 : i64, rngd.name = "w"}, %s: memref<16x2xf8E4M3FN> {rngd.dm_base = 256 : i64, rngd.name = "s"}, %g: f32 {rngd.name = "g"}, %o: memref<16x32xf32> {rngd.dm_base = 320 : i64, rngd.name = "o"})
// IR-NEXT:    fetch.fetch %w {base = 0 : i64}
// IR-NEXT:    fetch.dequant %{{.*}}, %s, %g {format = "nvfp4", scale_base = 256 : i64}
// DIS:      program 6: "dequant/0"
// DIS:        base: 0x0 (0)
// DIS:      program 7: "dequant/1"
// DIS:        in_dtype: f8E4M3FN
// DIS:        base: 0x100 (256)
// EMIT-LABEL: func.func @dequant(
// EMIT:       fetch.fetch %s {base = 256 : i64
func.func @dequant(%w: memref<16x32xf4E2M1FN>, %s: memref<16x2xf8E4M3FN>, %g: f32, %o: memref<16x32xf32>) {
  %c = fetch.fetch %w : memref<16x32xf4E2M1FN> -> !fetch.stream<main, [16], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s, %g {format = "nvfp4"} : !fetch.stream<main, [16], [32], f4E2M1FN>, memref<16x2xf8E4M3FN>, f32 -> !fetch.stream<main, [16], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [16], [32], f32>, memref<16x32xf32>
  func.return
}

// @views: two explicitly placed views of one 4 KiB buffer overlap (rows 32..63
// of %whole are %half): accepted.  %out goes after the buffer, at 0x1000.
// IR-LABEL: func.func @views(%whole: memref<64x64xi8> {rngd.dm_base = 0 : i64, rngd.name = "whole"}, %half: memref<32x64xi8> {rngd.dm_base = 2048 : i64, rngd.name = "half"}, %out: memref<32x64xi8> {rngd.dm_base = 4096 : i64, rngd.name = "out"})
// DIS:      program 8: "views/0"
// DIS:        base: 0x0 (0)
// DIS:      program 9: "views/1"
// DIS:        base: 0x800 (2048)
func.func @views(%whole: memref<64x64xi8> {rngd.dm_base = 0 : i64}, %half: memref<32x64xi8> {rngd.dm_base = 2048 : i64}, %out: memref<32x64xi8>) {
  %a = fetch.fetch %whole : memref<64x64xi8> -> !fetch.stream<main, [64], [64], i8>
  %ta = rngd.to_trf %a : !fetch.stream<main, [64], [64], i8> -> !rngd.trf<i8>
  %h = fetch.fetch %half : memref<32x64xi8> -> !fetch.stream<main, [32], [64], i8>
  rngd.commit %h, %out : !fetch.stream<main, [32], [64], i8>, memref<32x64xi8>
  func.return
}

// @layouts: byte spans of strided and 4-bit tensors.  %w: 32 bytes at 0x0.
// %r: rows in reverse (stride -16, offset 16): elements 0 .. 31, 32 bytes at
// 0x40.  %n: stride -16 with offset 0 reaches elements -16 .. 15, i.e. 16
// bytes below its base; the first 64-byte boundary whose lowest byte is past
// %r (which ends at 0x5f) is 0x80 (bytes 0x70 .. 0x8f).  %p: 3 f4E2M1FN
// codes, 2 bytes, at 0xc0 (after 0x8f); %q at 0x100 (after 0xc1).
// IR-LABEL: func.func @layouts(%w: memref<2x16xi8> {rngd.dm_base = 0 : i64, rngd.name = "w"}, %r: memref<2x16xi8, strided<[-16, 1], offset: 16>> {rngd.dm_base = 64 : i64, rngd.name = "r"}, %n: memref<2x16xi8, strided<[-16, 1]>> {rngd.dm_base = 128 : i64, rngd.name = "n"}, %p: memref<3xf4E2M1FN> {rngd.dm_base = 192 : i64, rngd.name = "p"}, %q: memref<4xi8> {rngd.dm_base = 256 : i64, rngd.name = "q"})
// DIS:      program 10: "layouts/0"
// DIS:        base: 0x0 (0)
// DIS:      program 11: "layouts/1"
// DIS:        base: 0x50 (80)
// DIS:        sequencer: [2 : -16, 16 : 1] : 16
func.func @layouts(%w: memref<2x16xi8>, %r: memref<2x16xi8, strided<[-16, 1], offset: 16>>,
                   %n: memref<2x16xi8, strided<[-16, 1]>>, %p: memref<3xf4E2M1FN>, %q: memref<4xi8>) {
  %s = fetch.fetch %w : memref<2x16xi8> -> !fetch.stream<main, [2], [16], i8>
  rngd.commit %s, %n : !fetch.stream<main, [2], [16], i8>, memref<2x16xi8, strided<[-16, 1]>>
  %t = fetch.fetch %r : memref<2x16xi8, strided<[-16, 1], offset: 16>> -> !fetch.stream<main, [2], [16], i8>
  %tt = rngd.to_trf %t : !fetch.stream<main, [2], [16], i8> -> !rngd.trf<i8>
  func.return
}

// A function without fetch.fetch is not a kernel: left alone.
// IR-LABEL: func.func @not_a_kernel(%x: memref<4xi8>) {
// EMIT-LABEL: func.func @not_a_kernel(%x: memref<4xi8>) {
func.func @not_a_kernel(%x: memref<4xi8>) {
  func.return
}

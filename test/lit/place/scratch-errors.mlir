// Scratch buffers cannot be placed explicitly: fetch-place-dm places them
// after every argument, and a dm_base on the rngd.scratch, or a base on a
// fetch of it, that names another address is an error at that op.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-place-dm
// RUN: not %fetchc %s --split-input-file -p fetch-place-dm --emit=mlir -o %t.out 2>&1 | FileCheck %s
// RUN: not test -e %t.out

// CHECK: scratch-errors.mlir:[[# @LINE + 3]]:8: error: 'rngd.scratch' op dm_base = 4096 (0x1000) of scratch buffer scratch0 is not where fetch-place-dm places it, 0x40: scratch buffers are the compiler's own tensors, placed by fetch-place-dm after every argument of the kernel; explicit placement is not possible for them; drop the dm_base
func.func @explicit_scratch(%a: memref<4x16xi8>) -> !rngd.trf<i8> {
  // expected-error @+1 {{'rngd.scratch' op dm_base = 4096 (0x1000) of scratch buffer scratch0 is not where fetch-place-dm places it, 0x40: scratch buffers are the compiler's own tensors, placed by fetch-place-dm after every argument of the kernel; explicit placement is not possible for them; drop the dm_base}}
  %b = rngd.scratch {dm_base = 4096 : i64} : memref<4x16xi8>
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %b : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  %t = fetch.fetch %b : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %r = rngd.to_trf %t : !fetch.stream<sub, [4], [16], i8> -> !rngd.trf<i8>
  func.return %r : !rngd.trf<i8>
}

// -----

// CHECK: scratch-errors.mlir:[[# @LINE + 8]]:8: error: 'fetch.fetch' op base 0 (0x0) names an address for scratch buffer scratch1, which fetch-place-dm places at 0x40: scratch buffers are the compiler's own tensors, placed by fetch-place-dm after every argument of the kernel; explicit placement is not possible for them; drop the base
// CHECK: scratch-errors.mlir:[[# @LINE + 3]]:8: note: scratch buffer scratch1 is defined here
// An argument already named scratch0: the buffer is scratch1.
func.func @fetch_base(%scratch0: memref<4x16xi8>) -> !rngd.trf<i8> {
  %b = rngd.scratch : memref<4x16xi8> // expected-note {{scratch buffer scratch1 is defined here}}
  %s = fetch.fetch %scratch0 : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %b : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  // expected-error @+1 {{'fetch.fetch' op base 0 (0x0) names an address for scratch buffer scratch1, which fetch-place-dm places at 0x40: scratch buffers are the compiler's own tensors, placed by fetch-place-dm after every argument of the kernel; explicit placement is not possible for them; drop the base}}
  %t = fetch.fetch %b {base = 0 : i64} : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %r = rngd.to_trf %t : !fetch.stream<sub, [4], [16], i8> -> !rngd.trf<i8>
  func.return %r : !rngd.trf<i8>
}

// An alias means what its own input defines: with --split-input-file, a
// chunk that redefines `#l` gets its own layout, never an earlier chunk's
// (the second fetch once read at base 0, not 64).
//
// RUN: %fetchc --split-input-file --emit=mlir %s | FileCheck %s
// RUN: %fetchc --split-input-file --emit=seq %s | FileCheck %s --check-prefix=SEQ

// SEQ: program_name = "a/0", unit = #fetch_seq.unit<main>, base = 0 : i64
// SEQ: program_name = "b/0", unit = #fetch_seq.unit<main>, base = 64 : i64

// CHECK-LABEL: func.func @a
// CHECK-SAME: memref<64xbf16, strided<[1]>>
// CHECK: fetch.fetch %{{.*}} {base = 0 : i64
#l = strided<[1], offset: 0>
func.func @a(%x: memref<64xbf16, #l>, %o: memref<64xbf16>) {
  %s = fetch.fetch %x {map = affine_map<(d0, d1) -> (d0 * 64 + d1)>} : memref<64xbf16, #l> -> !fetch.stream<main, [1], [64], bf16>
  rngd.commit %s, %o : !fetch.stream<main, [1], [64], bf16>, memref<64xbf16>
  func.return
}

// -----

// CHECK-LABEL: func.func @b
// CHECK-SAME: memref<64xbf16, strided<[1], offset: 32>>
// CHECK: fetch.fetch %{{.*}} {base = 0 : i64
#l = strided<[1], offset: 32>
func.func @b(%x: memref<64xbf16, #l>, %o: memref<64xbf16>) {
  %s = fetch.fetch %x {map = affine_map<(d0, d1) -> (d0 * 64 + d1)>} : memref<64xbf16, #l> -> !fetch.stream<main, [1], [64], bf16>
  rngd.commit %s, %o : !fetch.stream<main, [1], [64], bf16>, memref<64xbf16>
  func.return
}

// fetch-place-dm and padded fetches (ir.md §2a, hardware.md §2.0): the pass
// places each tensor's padded extent (the bytes its padded fetches may read
// before and after it), so no tensor it places is read as padding; an explicit
// placement whose padding bytes overlap another tensor, or reach below DM
// address 0, is an error (padding-errors.mlir).
//
// RUN: %fetchc %s --split-input-file -p fetch-place-dm --emit=mlir | FileCheck %s

// %a (92 rows of 32 bytes) is read as 96 rows: its padded extent ends at 3072,
// so %o goes at 3072, not at 2944 (the next multiple of 64 after its bytes).
// CHECK-LABEL: func.func @rows_past_the_end(
// CHECK-SAME: %a: memref<92x32xi8> {rngd.dm_base = 0 : i64, rngd.name = "a"}, %o: memref<96x32xi8> {rngd.dm_base = 3072 : i64, rngd.name = "o"}
func.func @rows_past_the_end(%a: memref<92x32xi8>, %o: memref<96x32xi8>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 0, size = 96>} : memref<92x32xi8> -> !fetch.stream<main, [96], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [96], [32], i8>, memref<96x32xi8>
  func.return
}

// -----

// A left pad of 2 reads 2 bytes before %a: the pass places %a at 64, not 0.
// CHECK-LABEL: func.func @left(
// CHECK-SAME: %a: memref<32x90xi8, strided<[96, 1]>> {rngd.dm_base = 64 : i64, rngd.name = "a"}, %o: memref<32x96xi8> {rngd.dm_base = 3136 : i64, rngd.name = "o"}
func.func @left(%a: memref<32x90xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {map = affine_map<(r, p) -> (r, p - 2)>, pad = #fetch.pad<dim = 1, left = 2, size = 96>}
      : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// Round trip of a padded fetch.fetch (#fetch.pad, with and without a left
// pad), fetch.mask, and a masked fetch_seq.program (#fetch_seq.mask in its
// three valid_count_dim forms, #fetch_seq.pad), in the custom form and
// through the generic form (ir.md §2, hardware.md §2.0).
//
// RUN: %fetchc -p '' --emit=mlir %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | FileCheck %s --check-prefix=GENERIC
// RUN: %fetchc -p '' --emit=mlir %s > %t.custom
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir > %t.via-generic
// RUN: diff %t.custom %t.via-generic
// RUN: %fetchc -p '' --emit=mlir %t.custom | diff %t.custom -

// CHECK-LABEL: func.func @padded(
// CHECK-NEXT: %s = fetch.fetch %a {base = 64 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 32) + d2))>, pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
// CHECK-NEXT: %m = fetch.mask %s : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i8>
// CHECK-NEXT: %c = fetch.cast %m : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i32>
// GENERIC-LABEL: "func.func"() <{sym_name = "padded"
// GENERIC: %s = "fetch.fetch"(%a) <{base = 64 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 32) + d2))>, pad = #fetch.pad<dim = 1, size = 96>}> : (memref<32x92xi8, strided<[96, 1]>>) -> !fetch.stream<main, [32, 3], [32], i8>
// GENERIC-NEXT: %m = "fetch.mask"(%s) : (!fetch.stream<main, [32, 3], [32], i8>) -> !fetch.stream<main, [32, 3], [32], i8>
func.func @padded(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi32>) {
  %s = fetch.fetch %a {base = 64 : i64, map = affine_map<(a, c, p) -> (a, c * 32 + p)>, pad = #fetch.pad<dim = 1, size = 96>}
      : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i8>
  %c = fetch.cast %m : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i32>
  rngd.commit %c, %o : !fetch.stream<main, [32, 3], [32], i32>, memref<32x96xi32>
  func.return
}

// A left pad: the map's constant is -left (the map gives true memref indices).
// CHECK-LABEL: func.func @left(
// CHECK-NEXT: %s = fetch.fetch %a {map = affine_map<(d0, d1) -> (d0, (d1 + -2))>, pad = #fetch.pad<dim = 1, left = 2, size = 96>} : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
// GENERIC-LABEL: "func.func"() <{sym_name = "left"
// GENERIC: pad = #fetch.pad<dim = 1, left = 2, size = 96>}>
func.func @left(%a: memref<32x90xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {map = affine_map<(a, p) -> (a, p - 2)>, pad = #fetch.pad<dim = 1, left = 2, size = 96>}
      : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// The register blocks: one per valid_count_dim.
// CHECK-LABEL: func.func @programs(
// CHECK: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost, rightmost_valid_count = [28, 0, 0, 0, 0, 0, 0, 0], left_pad = 2>, pad = #fetch_seq.pad<dims = [1, 2], left = 2, valid = 90>}
// CHECK: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = iterator<1>, rightmost_valid_count = [16, 16, 16, 16, 16, 16, 1, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 3], left = 0, valid = 97>}
// CHECK: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost_and_second_rightmost, rightmost_valid_count = [0, 8, 0, 0, 0, 0, 0, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 2], left = 0, valid = 1000>}
// GENERIC-LABEL: "func.func"() <{sym_name = "programs"
// GENERIC: valid_count_dim = iterator<1>
func.func @programs(%a: memref<32x90xi8, strided<[96, 1]>>, %b: memref<32x97xf32, strided<[128, 1]>>,
                    %c: memref<4x1000xbf16, strided<[1024, 1]>>, %o1: memref<32x96xi8>, %o2: memref<32x128xf32>,
                    %o3: memref<4x1024xbf16>) {
  %s1 = fetch_seq.program %a {program_name = "programs/0", unit = #fetch_seq.unit<main>, base = 62 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 32, 3, 32>, strides = array<i64: 96, 32, 1>, stages = #fetch_seq.stages<masking>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 1 : i64, cycles = 96 : i64, mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost, rightmost_valid_count = [28, 0, 0, 0, 0, 0, 0, 0], left_pad = 2>, pad = #fetch_seq.pad<dims = [1, 2], left = 2, valid = 90>} : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  rngd.commit %s1, %o1 : !fetch.stream<main, [32, 3], [32], i8>, memref<32x96xi8>
  %s2 = fetch_seq.program %b {program_name = "programs/1", unit = #fetch_seq.unit<main>, base = 4096 : i64, packet_size = 16 : i64, fetch_size = 32 : i64, limits = array<i64: 32, 8, 16>, strides = array<i64: 128, 16, 1>, stages = #fetch_seq.stages<masking>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 2 : i64, words_per_packet = 2 : i64, cycles = 512 : i64, mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = iterator<1>, rightmost_valid_count = [16, 16, 16, 16, 16, 16, 1, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 3], left = 0, valid = 97>} : memref<32x97xf32, strided<[128, 1]>> -> !fetch.stream<main, [32, 8, 1], [16], f32>
  rngd.commit %s2, %o2 : !fetch.stream<main, [32, 8, 1], [16], f32>, memref<32x128xf32>
  %s3 = fetch_seq.program %c {program_name = "programs/2", unit = #fetch_seq.unit<main>, base = 24576 : i64, packet_size = 16 : i64, fetch_size = 32 : i64, limits = array<i64: 4, 64, 16>, strides = array<i64: 1024, 16, 1>, stages = #fetch_seq.stages<masking>, zp_mode = #fetch_seq.zp_mode<none>, flit_count = 1 : i64, words_per_packet = 1 : i64, cycles = 256 : i64, mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost_and_second_rightmost, rightmost_valid_count = [0, 8, 0, 0, 0, 0, 0, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 2], left = 0, valid = 1000>} : memref<4x1000xbf16, strided<[1024, 1]>> -> !fetch.stream<main, [4, 64], [16], bf16>
  rngd.commit %s3, %o3 : !fetch.stream<main, [4, 64], [16], bf16>, memref<4x1024xbf16>
  func.return
}

// fetch-to-seq on masked fetches (hardware.md §2.0): the loops that walk the
// padded axis stay unmerged, the base moves back by the left pad, and the
// derived configuration lands on the program (#fetch_seq.mask, entries
// outermost first, valid counts) with its padding (#fetch_seq.pad). The
// vendor book's worked cases ("Masking", "Left Padding") and the softmax
// input of issue 28.
// RUN: %fetchc %s -p fetch-place-dm,fetch-to-seq --emit=seq | FileCheck %s

// Contiguous right: B = 92 in 96, time [A, 3], packet [32]. Unmasked, the nest
// would merge to [3072 : 1].
// CHECK-LABEL: func.func @contiguous_right(
// CHECK: fetch_seq.program %a {program_name = "contiguous_right/0", unit = #fetch_seq.unit<main>, base = 64 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 32, 3, 32>, strides = array<i64: 96, 32, 1>, stages = #fetch_seq.stages<masking>,
// CHECK-SAME: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost, rightmost_valid_count = [28, 0, 0, 0, 0, 0, 0, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 2], left = 0, valid = 92>}
func.func @contiguous_right(%a: memref<32x92xi8, strided<[96, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {map = affine_map<(a, c, p) -> (a, c * 32 + p)>, pad = #fetch.pad<dim = 1, size = 96>}
      : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32, 3], [32], i8>, memref<32x96xi8>
  func.return
}

// Split right: time [3, A]; last_axis is the chunk loop, entry 0 (the book's
// bullet names the packet axis, its prose the chunk loop).
// CHECK-LABEL: func.func @split_right(
// CHECK: limits = array<i64: 3, 32, 32>, strides = array<i64: 32, 96, 1>
// CHECK-SAME: mask = #fetch_seq.mask<last_axis = 0, valid_count_dim = rightmost, rightmost_valid_count = [28, 0, 0, 0, 0, 0, 0, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [0, 2], left = 0, valid = 92>}
func.func @split_right(%a: memref<32x92xi8, strided<[96, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<96x32xi8>) {
  %s = fetch.fetch %a {map = affine_map<(c, a, p) -> (a, c * 32 + p)>, pad = #fetch.pad<dim = 1, size = 96>}
      : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [3, 32], [32], i8>
  %m = fetch.mask %s : !fetch.stream<main, [3, 32], [32], i8> -> !fetch.stream<main, [3, 32], [32], i8>
  rngd.commit %m, %o : !fetch.stream<main, [3, 32], [32], i8>, memref<96x32xi8>
  func.return
}

// Variable per chunk: B = 97 of f32 in 128, time [A, 8, 1] (the book's unit
// loop vanishes), packet [16]: Iterator over entry 1, valid counts summing to 97.
// CHECK-LABEL: func.func @variable_per_chunk(
// CHECK: limits = array<i64: 32, 8, 16>, strides = array<i64: 128, 16, 1>
// CHECK-SAME: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = iterator<1>, rightmost_valid_count = [16, 16, 16, 16, 16, 16, 1, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 3], left = 0, valid = 97>}
func.func @variable_per_chunk(%b: memref<32x97xf32, strided<[128, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<32x128xf32>) {
  %s = fetch.fetch %b {map = affine_map<(a, c, u, p) -> (a, c * 16 + p)>, pad = #fetch.pad<dim = 1, size = 128>}
      : memref<32x97xf32, strided<[128, 1]>> -> !fetch.stream<main, [32, 8, 1], [16], f32>
  %m = fetch.mask %s : !fetch.stream<main, [32, 8, 1], [16], f32> -> !fetch.stream<main, [32, 8, 1], [16], f32>
  rngd.commit %m, %o : !fetch.stream<main, [32, 8, 1], [16], f32>, memref<32x128xf32>
  func.return
}

// Contiguous left + right: 2 + 90 + 4 = 96; the base moves back by 2 bytes.
// CHECK-LABEL: func.func @left_right(
// CHECK: base = 62 : i64, packet_size = 32 : i64, fetch_size = 32 : i64, limits = array<i64: 32, 3, 32>, strides = array<i64: 96, 32, 1>
// CHECK-SAME: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost, rightmost_valid_count = [28, 0, 0, 0, 0, 0, 0, 0], left_pad = 2>, pad = #fetch_seq.pad<dims = [1, 2], left = 2, valid = 90>}
func.func @left_right(%a: memref<32x90xi8, strided<[96, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {map = affine_map<(a, c, p) -> (a, c * 32 + p - 2)>, pad = #fetch.pad<dim = 1, left = 2, size = 96>}
      : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32, 3], [32], i8>, memref<32x96xi8>
  func.return
}

// The pad inside each packet: last_axis is the packet's own entry.
// CHECK-LABEL: func.func @inside_the_packet(
// CHECK: limits = array<i64: 32, 96>, strides = array<i64: 96, 1>
// CHECK-SAME: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost, rightmost_valid_count = [92, 0, 0, 0, 0, 0, 0, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1], left = 0, valid = 92>}
func.func @inside_the_packet(%a: memref<32x92xi8, strided<[96, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// The softmax input: rows of 1000 bf16 read as 1024 in packets of 16, cast to
// f32; the last two packets of a row carry 8 and 16 padding slots, 64 chunks
// (no Iterator): RightmostAndSecondRightmost, counts[0] the last cell.
// CHECK-LABEL: func.func @softmax_input(
// CHECK: limits = array<i64: 4, 64, 16>, strides = array<i64: 1024, 16, 1>, stages = #fetch_seq.stages<masking,type_conversion>
// CHECK-SAME: mask = #fetch_seq.mask<last_axis = 1, valid_count_dim = rightmost_and_second_rightmost, rightmost_valid_count = [0, 8, 0, 0, 0, 0, 0, 0], left_pad = 0>, pad = #fetch_seq.pad<dims = [1, 2], left = 0, valid = 1000>}
func.func @softmax_input(%x: memref<4x1000xbf16, strided<[1024, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<4x1024xf32>) {
  %s = fetch.fetch %x {map = affine_map<(r, c, p) -> (r, c * 16 + p)>, pad = #fetch.pad<dim = 1, size = 1024>}
      : memref<4x1000xbf16, strided<[1024, 1]>> -> !fetch.stream<main, [4, 64], [16], bf16>
  %m = fetch.mask %s : !fetch.stream<main, [4, 64], [16], bf16> -> !fetch.stream<main, [4, 64], [16], bf16>
  %f = fetch.cast %m : !fetch.stream<main, [4, 64], [16], bf16> -> !fetch.stream<main, [4, 64], [16], f32>
  rngd.commit %f, %o : !fetch.stream<main, [4, 64], [16], f32>, memref<4x1024xf32>
  func.return
}

// Unmasked, a padded fetch that is only copied merges its loops as usual and
// carries its padding (the MANIFEST's pad) but no mask.
// CHECK-LABEL: func.func @copied(
// CHECK: limits = array<i64: 3072>, strides = array<i64: 1>, stages = #fetch_seq.stages<none>
// CHECK-SAME: pad = #fetch_seq.pad<dims = [1, 2], left = 0, valid = 92>}
// CHECK-NOT: mask =
func.func @copied(%a: memref<32x92xi8, strided<[96, 1]>> {rngd.dm_base = 64 : i64}, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {map = affine_map<(a, c, p) -> (a, c * 32 + p)>, pad = #fetch.pad<dim = 1, size = 96>}
      : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32, 3], [32], i8>, memref<32x96xi8>
  func.return
}

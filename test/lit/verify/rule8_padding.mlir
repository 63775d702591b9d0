// ir.md §3 rule 8 for padded fetches (hardware.md §2.0): where padding may be
// read. The padded row stays inside the layout pitch, the map walks the padded
// axis whole and in order (its constant is -left), a left pad reads no byte
// below DM address 0, the pad declares some padding, and every count is an i64.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

func.func @past_the_pitch(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x100xi8>) {
  // expected-error @+1 {{'fetch.fetch' op pad size 100 reads 8 elements right of dim 1's 92 valid ones, past the layout pitch: dim 0's stride is 96 elements, so a row holds 96 elements of dim 1 (stride 1) and the right pad may be at most 4; pad less, or lay the tensor out with a wider pitch (strided<[...]>)}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 100>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [100], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [100], i8>, memref<32x100xi8>
  func.return
}

// -----

// A huge pad that still fits an i64: past the pitch, with the numbers.
func.func @huge(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  // expected-error @+1 {{'fetch.fetch' op pad size 9223372036854775807 reads 9223372036854775715 elements right of dim 1's 92 valid ones, past the layout pitch}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 9223372036854775807>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

func.func @left_past_the_pitch(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x97xi8>) {
  // expected-error @+1 {{'fetch.fetch' op pad size 97 reads 5 elements left of dim 1's 92 valid ones, past the layout pitch: dim 0's stride is 96 elements, so a row holds 96 elements of dim 1 (stride 1) and the left pad may be at most 4; pad less, or lay the tensor out with a wider pitch (strided<[...]>)}}
  %s = fetch.fetch %a {map = affine_map<(r, p) -> (r, p - 5)>, pad = #fetch.pad<dim = 1, left = 5, size = 97>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [97], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [97], i8>, memref<32x97xi8>
  func.return
}

// -----

func.func @no_padding(%a: memref<32x96xi8>, %o: memref<32x96xi8>) {
  // expected-error @+1 {{'fetch.fetch' op pad size 96 equals the 96 valid elements of dim 1: it declares no padding; drop it}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x96xi8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

func.func @too_small(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x90xi8>) {
  // expected-error @+1 {{'fetch.fetch' op pad size 90 with left 0 leaves no room for the 92 valid elements of dim 1: size must be at least left + 92 = 92}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 90>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [90], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [90], i8>, memref<32x90xi8>
  func.return
}

// -----

func.func @not_a_dim(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x92xi8>) {
  // expected-error @+1 {{'fetch.fetch' op pad dim 2 is not a dimension of the memref (rank 2)}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 2, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [92], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [92], i8>, memref<32x92xi8>
  func.return
}

// -----

// The stream reads only 64 of the 96 padded positions.
func.func @partial_walk(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x64xi8>) {
  // expected-error @+1 {{'fetch.fetch' op a padded fetch walks its padded axis whole, once and in order: the stream dims that index it must be its row-major composite index minus the left pad; time dim 1, packet dim 0 cover 64 indices of dim 1, but the pad's size is 96}}
  %s = fetch.fetch %a {map = affine_map<(r, c, p) -> (r, c * 32 + p)>, pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32, 2], [32], i8>, memref<32x64xi8>
  func.return
}

// -----

// Chunks walked out of order (p * 3 + c).
func.func @out_of_order(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  // expected-error @+1 {{time dim 1, packet dim 0 index dim 1 with coefficients [1, 3], but as a row-major composite they need [32, 1]}}
  %s = fetch.fetch %a {map = affine_map<(r, c, p) -> (r, p * 3 + c)>, pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32, 3], [32], i8>, memref<32x96xi8>
  func.return
}

// -----

// A left pad of 2 needs the map to start at -2.
func.func @left_without_shift(%a: memref<32x90xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  // expected-error @+1 {{the map starts dim 1 at index 0, but the pad's reads start at -2 (the map's constant there must be -left = -2)}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, left = 2, size = 96>, map = affine_map<(r, p) -> (r, p)>} : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

// A left pad at base 0 would read below DM address 0.
func.func @negative_base(%a: memref<32x90xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  // expected-error @+1 {{'fetch.fetch' op its padding reads DM byte addresses from -2, below address 0: the left pad (and layout) reach 2 bytes before the tensor's base 0; place the tensor at base 8 or higher (rngd.dm_base), or pad less on the left}}
  %s = fetch.fetch %a {base = 0 : i64, map = affine_map<(a, p) -> (a, p - 2)>, pad = #fetch.pad<dim = 1, left = 2, size = 96>}
      : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

func.func @i64_overflow(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  // expected-error @+1 {{#fetch.pad size 9223372036854775808 is not a count of elements from 0 to 2^63 - 1 (an i64)}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 9223372036854775808>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

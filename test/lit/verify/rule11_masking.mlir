// ir.md §3 rule 11 (masking, hardware.md §2.0): fetch.mask only on main, only
// on a padded fetch's stream, only for a padding the mask configuration can
// express (each error names the reason and the numbers, with a note at the
// fetch); and a padded fetch without a mask whose padding slots reach a
// consumer that computes with them (an error at the fetch, a note at the
// consumer). Rule 5 for fetch.mask: first stage, directly after the fetch.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: the book's contiguous right pad (92 of 96), masked then cast; and an
// unmasked padded fetch that is only copied (commit through switch/collect).
func.func @masked(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi32>) {
  %s = fetch.fetch %a {map = affine_map<(a, c, p) -> (a, c * 32 + p)>, pad = #fetch.pad<dim = 1, size = 96>}
      : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32, 3], [32], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i8>
  %c = fetch.cast %m : !fetch.stream<main, [32, 3], [32], i8> -> !fetch.stream<main, [32, 3], [32], i32>
  rngd.commit %c, %o : !fetch.stream<main, [32, 3], [32], i32>, memref<32x96xi32>
  func.return
}

func.func @copied(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  %w = rngd.switch %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  %c = rngd.collect %w : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %c, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

func.func @unmasked_cast(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi32>) {
  // expected-error @+1 {{'fetch.fetch' op reads padding (#fetch.pad<dim = 1, size = 96>) that reaches 'fetch.cast' unmasked, which computes with whatever DM holds in the padding slots: add fetch.mask directly after this fetch.fetch to zero them; unmasked padding may only be copied (rngd.commit, through rngd.switch / rngd.collect)}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  // expected-note @+1 {{the padding slots reach this op}}
  %c = fetch.cast %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i32>
  rngd.commit %c, %o : !fetch.stream<main, [32], [96], i32>, memref<32x96xi32>
  func.return
}

// -----

func.func @unmasked_engine(%a: memref<16x92xf32, strided<[96, 1]>>) -> !rngd.vrf<[16, 96], f32> {
  // expected-error @+1 {{reads padding (#fetch.pad<dim = 1, size = 96>) that reaches 'rngd.to_vrf' unmasked}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<16x92xf32, strided<[96, 1]>> -> !fetch.stream<main, [16], [96], f32>
  %c = rngd.collect %s : !fetch.stream<main, [16], [96], f32> -> !fetch.stream<main, [16], [96], f32>
  // expected-note @+1 {{the padding slots reach this op}}
  %v = rngd.to_vrf %c : !fetch.stream<main, [16], [96], f32> -> !rngd.vrf<[16, 96], f32>
  func.return %v : !rngd.vrf<[16, 96], f32>
}

// -----

func.func @no_padding(%a: memref<32x96xi8>, %o: memref<32x96xi8>) {
  // expected-note @+1 {{the fetch is here}}
  %s = fetch.fetch %a : memref<32x96xi8> -> !fetch.stream<main, [32], [96], i8>
  // expected-error @+1 {{'fetch.mask' op masks a stream whose fetch.fetch declares no padding: there is nothing to mask; drop the fetch.mask, or declare the padded axis on the fetch (pad = #fetch.pad<dim = D, size = S>)}}
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

func.func @on_sub(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<sub, [32], [96], i8>
  // expected-error @+1 {{'fetch.mask' op runs on the sub Fetch Unit, whose adapter has only the cast stage: masking is main-context only; fetch the padded tensor on the main context (rngd.commit it to DM and stage that on sub), or read only its valid part on sub}}
  %m = fetch.mask %s : !fetch.stream<sub, [32], [96], i8> -> !fetch.stream<sub, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<sub, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

// The right padding of 1024 - 900 = 124 bf16 covers the last 8 of 64 packets of
// 16: more than the last two cells, and Iterator needs at most 8 iterations.
func.func @more_than_eight_cells(%a: memref<4x900xbf16, strided<[1024, 1]>>, %o: memref<4x1024xf32>) {
  // expected-note @+1 {{the padded fetch is here}}
  %s = fetch.fetch %a {map = affine_map<(r, c, p) -> (r, c * 16 + p)>, pad = #fetch.pad<dim = 1, size = 1024>}
      : memref<4x900xbf16, strided<[1024, 1]>> -> !fetch.stream<main, [4, 64], [16], bf16>
  // expected-error @+1 {{'fetch.mask' op cannot mask the padding of #fetch.pad<dim = 1, size = 1024>: the right padding covers 8 of the 64 packets along the padded axis (time dim 1, packet dim 0; valid 900, 16 positions a packet), more than the last two (RightmostAndSecondRightmost), and Iterator needs a loop of at most 8 iterations, not 64; use fewer, larger packets (at most 8 along the axis) or pad less}}
  %m = fetch.mask %s : !fetch.stream<main, [4, 64], [16], bf16> -> !fetch.stream<main, [4, 64], [16], bf16>
  %c = fetch.cast %m : !fetch.stream<main, [4, 64], [16], bf16> -> !fetch.stream<main, [4, 64], [16], f32>
  rngd.commit %c, %o : !fetch.stream<main, [4, 64], [16], f32>, memref<4x1024xf32>
  func.return
}

// -----

// Packets of 128 bf16: the last one holds 1000 - 896 = 104 valid elements, over
// the count's cap of 63 for bf16.
func.func @count_over_cap(%a: memref<4x1000xbf16, strided<[1024, 1]>>, %o: memref<4x1024xf32>) {
  // expected-note @+1 {{the padded fetch is here}}
  %s = fetch.fetch %a {map = affine_map<(r, c, p) -> (r, c * 128 + p)>, pad = #fetch.pad<dim = 1, size = 1024>}
      : memref<4x1000xbf16, strided<[1024, 1]>> -> !fetch.stream<main, [4, 8], [128], bf16>
  // expected-error @+1 {{'fetch.mask' op cannot mask the padding of #fetch.pad<dim = 1, size = 1024>: the mask needs a valid count of 104 (cell 0, rightmost), over the cap of 63 for bf16 (the mask reaches 128 bytes); use smaller packets, so that each packet's valid part is at most 63 elements}}
  %m = fetch.mask %s : !fetch.stream<main, [4, 8], [128], bf16> -> !fetch.stream<main, [4, 8], [128], bf16>
  %c = fetch.cast %m : !fetch.stream<main, [4, 8], [128], bf16> -> !fetch.stream<main, [4, 8], [128], f32>
  rngd.commit %c, %o : !fetch.stream<main, [4, 8], [128], f32>, memref<4x1024xf32>
  func.return
}

// -----

// Two time dims (4 x 4 chunks of 8) walk the padded axis: the padding (the
// last 6 chunks) is no last iteration of one loop.
func.func @two_time_dims(%a: memref<8x80xi8, strided<[128, 1]>>, %o: memref<8x128xi8>) {
  // expected-note @+1 {{the padded fetch is here}}
  %s = fetch.fetch %a {map = affine_map<(r, b, c, p) -> (r, b * 32 + c * 8 + p)>, pad = #fetch.pad<dim = 1, size = 128>}
      : memref<8x80xi8, strided<[128, 1]>> -> !fetch.stream<main, [8, 4, 4], [8], i8>
  // expected-error @+1 {{'fetch.mask' op cannot mask the padding of #fetch.pad<dim = 1, size = 128>: the padded axis is walked by 2 time dims (time dim 1, time dim 2, packet dim 0), and no single sequencer entry selects its padded cells: the mask zeroes in the last (or first) iteration of one loop; walk the padded axis with one time dim and the packet}}
  %m = fetch.mask %s : !fetch.stream<main, [8, 4, 4], [8], i8> -> !fetch.stream<main, [8, 4, 4], [8], i8>
  rngd.commit %m, %o : !fetch.stream<main, [8, 4, 4], [8], i8>, memref<8x128xi8>
  func.return
}

// -----

// The packet is [4, 96] with the padded axis inside: each packet holds four
// runs of padding, not one head or tail.
func.func @not_head_or_tail(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  // expected-note @+1 {{the padded fetch is here}}
  %s = fetch.fetch %a {map = affine_map<(t, r, p) -> (t * 4 + r, p)>, pad = #fetch.pad<dim = 1, size = 96>}
      : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [8], [4, 96], i8>
  // expected-error @+1 {{'fetch.mask' op cannot mask the padding of #fetch.pad<dim = 1, size = 96>: the padding slots are not a head or tail of each packet: packet dim 0 (size 4) lies outside packet dim 1, which walk the padded axis, so each packet holds several runs of padding; make the padded axis the outermost packet dims (only dims that do not walk it may follow)}}
  %m = fetch.mask %s : !fetch.stream<main, [8], [4, 96], i8> -> !fetch.stream<main, [8], [4, 96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [8], [4, 96], i8>, memref<32x96xi8>
  func.return
}

// -----

// The left pad of 20 covers three packets of 8: the mask zeroes a head only in
// the first iteration of one loop.
func.func @left_too_wide(%a: memref<8x100xi8, strided<[128, 1]>>, %o: memref<8x128xi8>) {
  // expected-note @+1 {{the padded fetch is here}}
  %s = fetch.fetch %a {map = affine_map<(r, c, p) -> (r, c * 8 + p - 20)>, pad = #fetch.pad<dim = 1, left = 20, size = 128>}
      : memref<8x100xi8, strided<[128, 1]>> -> !fetch.stream<main, [8, 16], [8], i8>
  // expected-error @+1 {{'fetch.mask' op cannot mask the padding of #fetch.pad<dim = 1, left = 20, size = 128>: the left padding covers 3 of the 16 packets along the padded axis (time dim 1, packet dim 0; left 20, 8 positions a packet), but the mask zeroes a head only in the first one; pad less on the left}}
  %m = fetch.mask %s : !fetch.stream<main, [8, 16], [8], i8> -> !fetch.stream<main, [8, 16], [8], i8>
  rngd.commit %m, %o : !fetch.stream<main, [8, 16], [8], i8>, memref<8x128xi8>
  func.return
}

// -----

func.func @mask_after_cast(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi32>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  // expected-note @+1 {{the type cast is here}}
  %c = fetch.cast %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i32>
  // expected-error @+1 {{'fetch.mask' op a mask after type cast is not possible: the Fetch Adapter runs masking, then table lookup, then type cast, then zero-point subtraction, each at most once, directly after fetch.fetch and before any rngd op}}
  %m = fetch.mask %c : !fetch.stream<main, [32], [96], i32> -> !fetch.stream<main, [32], [96], i32>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i32>, memref<32x96xi32>
  func.return
}

// -----

func.func @two_masks(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  // expected-note @+1 {{the mask is here}}
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  // expected-error @+1 {{'fetch.mask' op a second mask is not possible}}
  %n = fetch.mask %m : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %n, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

// -----

func.func @mask_after_convert(%a: memref<32x92xbf16, strided<[96, 1]>>, %o: memref<32x96xf32>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xbf16, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], bf16>
  // expected-note @+1 {{the conversion is here}}
  %c = fetch.convert %s : !fetch.stream<main, [32], [96], bf16> -> !fetch.stream<main, [32], [96], f32>
  // expected-error @+1 {{'fetch.mask' op a mask after a fetch.convert is not possible: the conversion becomes table lookup and type cast stages, and the Fetch Adapter runs masking, then table lookup, then type cast, then zero-point subtraction, each at most once, directly after fetch.fetch and before any rngd op; mask directly after the fetch.fetch}}
  %m = fetch.mask %c : !fetch.stream<main, [32], [96], f32> -> !fetch.stream<main, [32], [96], f32>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], f32>, memref<32x96xf32>
  func.return
}

// -----

func.func @mask_changes_type(%a: memref<32x92xi8, strided<[96, 1]>>, %o: memref<32x96xi32>) {
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 1, size = 96>} : memref<32x92xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  // expected-error @+1 {{'fetch.mask' op changes the element type from i8 to i32; fetch.mask zeroes the padding slots and keeps the element type}}
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i32>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i32>, memref<32x96xi32>
  func.return
}

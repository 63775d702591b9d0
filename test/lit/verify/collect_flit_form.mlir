// hardware.md §2.5, ir.md §2: rngd.collect's result type is its input type or
// the flit form.  The flit form exists where a packet is a whole number F > 1
// of 32-byte flits (counting 4-bit types half a byte, i5 one byte, i9 two):
// time gains F as its new innermost dim, and the packet, flattened row-major,
// becomes one flit of elements.  Any other result type is an error at the
// collect that shows the legal types (or the one, and why the flit form would
// need padding).
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: the book's examples, both forms, and the element widths.
func.func @flit_forms(%a: memref<60x3840xf8E4M3FN>, %oa: memref<60x3840xf8E4M3FN>,
                      %b: memref<64x256xi8>, %t: !rngd.trf<i8>, %ob: memref<64x256xi32>,
                      %c: memref<4x8x64xbf16>, %oc: memref<4x512xbf16>,
                      %d: memref<4x128xf4E2M1FN>, %od: memref<512xf4E2M1FN>,
                      %e: memref<60x3840xf8E4M3FN>, %oe: memref<60x3840xf8E4M3FN>) {
  %sa = fetch.fetch %a : memref<60x3840xf8E4M3FN> -> !fetch.stream<main, [60], [3840], f8E4M3FN>
  %ca = rngd.collect %sa : !fetch.stream<main, [60], [3840], f8E4M3FN> -> !fetch.stream<main, [60, 120], [32], f8E4M3FN>
  rngd.commit %ca, %oa : !fetch.stream<main, [60, 120], [32], f8E4M3FN>, memref<60x3840xf8E4M3FN>
  %sb = fetch.fetch %b {map = affine_map<(m, p, e) -> (m, p * 32 + e)>} : memref<64x256xi8> -> !fetch.stream<main, [64, 8], [32], i8>
  %zb = fetch.zp_sub %sb, -3 : !fetch.stream<main, [64, 8], [32], i8> -> !fetch.stream<main, [64, 8], [32], i9>
  %cb = rngd.collect %zb : !fetch.stream<main, [64, 8], [32], i9> -> !fetch.stream<main, [64, 8, 2], [16], i9>
  %yb = rngd.contract_outer %cb, %t : !fetch.stream<main, [64, 8, 2], [16], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64, 8, 2], [16], i32>
  rngd.commit %yb, %ob : !fetch.stream<main, [64, 8, 2], [16], i32>, memref<64x256xi32>
  %sc = fetch.fetch %c : memref<4x8x64xbf16> -> !fetch.stream<main, [4], [8, 64], bf16>
  %cc = rngd.collect %sc : !fetch.stream<main, [4], [8, 64], bf16> -> !fetch.stream<main, [4, 32], [16], bf16>
  rngd.commit %cc, %oc : !fetch.stream<main, [4, 32], [16], bf16>, memref<4x512xbf16>
  %sd = fetch.fetch %d : memref<4x128xf4E2M1FN> -> !fetch.stream<main, [4], [128], f4E2M1FN>
  %cd = rngd.collect %sd : !fetch.stream<main, [4], [128], f4E2M1FN> -> !fetch.stream<main, [4, 2], [64], f4E2M1FN>
  rngd.commit %cd, %od : !fetch.stream<main, [4, 2], [64], f4E2M1FN>, memref<512xf4E2M1FN>
  %se = fetch.fetch %e : memref<60x3840xf8E4M3FN> -> !fetch.stream<main, [60], [3840], f8E4M3FN>
  %ce = rngd.collect %se : !fetch.stream<main, [60], [3840], f8E4M3FN> -> !fetch.stream<main, [60], [3840], f8E4M3FN>
  rngd.commit %ce, %oe : !fetch.stream<main, [60], [3840], f8E4M3FN>, memref<60x3840xf8E4M3FN>
  func.return
}

// -----

// Neither form: both legal result types are shown.
func.func @neither(%a: memref<60x3840xf8E4M3FN>, %o: memref<60x3840xf8E4M3FN>) {
  %s = fetch.fetch %a : memref<60x3840xf8E4M3FN> -> !fetch.stream<main, [60], [3840], f8E4M3FN>
  // expected-error @+1 {{'rngd.collect' op its result type !fetch.stream<main, [60, 2], [1920], f8E4M3FN> is neither of the Collect Engine's two forms for its input (hardware.md §2.5): the input type !fetch.stream<main, [60], [3840], f8E4M3FN> (packets kept whole) or the flit form !fetch.stream<main, [60, 120], [32], f8E4M3FN> (each 3840-byte packet split into 120 flits of 32 f8E4M3FN elements, the flit count a new innermost time dim)}}
  %c = rngd.collect %s : !fetch.stream<main, [60], [3840], f8E4M3FN> -> !fetch.stream<main, [60, 2], [1920], f8E4M3FN>
  rngd.commit %c, %o : !fetch.stream<main, [60, 2], [1920], f8E4M3FN>, memref<60x3840xf8E4M3FN>
  func.return
}

// -----

// The flit form's packet counts the width after the adapter: i9 is two bytes,
// so 16 elements to a flit, not 32.
func.func @i9_counts_two_bytes(%b: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %b : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{the flit form !fetch.stream<main, [64, 2], [16], i9> (each 64-byte packet split into 2 flits of 16 i9 elements, the flit count a new innermost time dim)}}
  %c = rngd.collect %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64, 1], [32], i9>
  %y = rngd.contract_outer %c, %t : !fetch.stream<main, [64, 1], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64, 1], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64, 1], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// Over one flit but not a multiple: the flit form would need padding.
func.func @needs_padding(%a: memref<8x56xi8>, %o: memref<8x56xi8>) {
  %s = fetch.fetch %a : memref<8x56xi8> -> !fetch.stream<main, [8], [56], i8>
  // expected-error @+1 {{'rngd.collect' op its result type !fetch.stream<main, [8, 2], [28], i8> must be its input type !fetch.stream<main, [8], [56], i8>, the Collect Engine's only form here: the packet of 56 i8 elements is 56 bytes, not a whole number of 32-byte flits, so the Collect Engine pads it to 2 flits (8 bytes of padding in the last), which a stream type cannot spell (hardware.md §2.5)}}
  %c = rngd.collect %s : !fetch.stream<main, [8], [56], i8> -> !fetch.stream<main, [8, 2], [28], i8>
  rngd.commit %c, %o : !fetch.stream<main, [8, 2], [28], i8>, memref<8x56xi8>
  func.return
}

// -----

// Under one flit: padded to one flit.
func.func @under_one_flit(%a: memref<250x4xf32>, %o: memref<250x4xf32>) {
  %s = fetch.fetch %a : memref<250x4xf32> -> !fetch.stream<main, [250], [4], f32>
  // expected-error @+1 {{'rngd.collect' op its result type !fetch.stream<main, [250, 1], [4], f32> must be its input type !fetch.stream<main, [250], [4], f32>, the Collect Engine's only form here: the packet of 4 f32 elements is 16 bytes, under one 32-byte flit, so the Collect Engine pads it to one flit, which a stream type cannot spell (hardware.md §2.5)}}
  %c = rngd.collect %s : !fetch.stream<main, [250], [4], f32> -> !fetch.stream<main, [250, 1], [4], f32>
  rngd.commit %c, %o : !fetch.stream<main, [250, 1], [4], f32>, memref<250x4xf32>
  func.return
}

// -----

// Exactly one flit: the flit form is the input type itself.
func.func @one_flit(%a: memref<8x32xi8>, %o: memref<8x32xi8>) {
  %s = fetch.fetch %a : memref<8x32xi8> -> !fetch.stream<main, [8], [32], i8>
  // expected-error @+1 {{'rngd.collect' op its result type !fetch.stream<main, [8, 1], [32], i8> must be its input type !fetch.stream<main, [8], [32], i8>, the Collect Engine's only form here: the packet of 32 i8 elements is 32 bytes, exactly one 32-byte flit, so its flit form is the input type itself (hardware.md §2.5)}}
  %c = rngd.collect %s : !fetch.stream<main, [8], [32], i8> -> !fetch.stream<main, [8, 1], [32], i8>
  rngd.commit %c, %o : !fetch.stream<main, [8, 1], [32], i8>, memref<8x32xi8>
  func.return
}

// -----

// The Collect Engine converts no element and keeps the context.
func.func @element_and_context(%a: memref<4x64xbf16>, %o: memref<4x64xf32>, %b: memref<4x64xbf16>, %p: memref<4x64xbf16>) {
  %s = fetch.fetch %a : memref<4x64xbf16> -> !fetch.stream<main, [4], [64], bf16>
  // expected-error @+1 {{'rngd.collect' op its result type !fetch.stream<main, [4, 4], [16], f32> is neither of the Collect Engine's two forms for its input (hardware.md §2.5): the input type !fetch.stream<main, [4], [64], bf16> (packets kept whole) or the flit form !fetch.stream<main, [4, 4], [16], bf16>}}
  %c = rngd.collect %s : !fetch.stream<main, [4], [64], bf16> -> !fetch.stream<main, [4, 4], [16], f32>
  rngd.commit %c, %o : !fetch.stream<main, [4, 4], [16], f32>, memref<4x64xf32>
  %t = fetch.fetch %b : memref<4x64xbf16> -> !fetch.stream<main, [4], [64], bf16>
  // expected-error @+1 {{'rngd.collect' op its result type !fetch.stream<sub, [4, 4], [16], bf16> is neither}}
  %d = rngd.collect %t : !fetch.stream<main, [4], [64], bf16> -> !fetch.stream<sub, [4, 4], [16], bf16>
  rngd.commit %d, %p : !fetch.stream<sub, [4, 4], [16], bf16>, memref<4x64xbf16>
  func.return
}

// -----

// After a flit-form collect, consumers check the new shape with their own
// messages: a commit counts elements, a block scale needs its block to divide
// the innermost packet dim (one flit of f32 is 8 elements).
func.func @consumers(%a: memref<4x64xf32>, %o: memref<4x32xf32>, %x: memref<4x64xf32>, %s: memref<4x8xf32>, %ox: memref<4x64xf32>) {
  %f = fetch.fetch %a : memref<4x64xf32> -> !fetch.stream<main, [4], [64], f32>
  %c = rngd.collect %f : !fetch.stream<main, [4], [64], f32> -> !fetch.stream<main, [4, 8], [8], f32>
  // expected-error @+1 {{'rngd.commit' op writes 256 elements into a memref of 128; the sizes must match}}
  rngd.commit %c, %o : !fetch.stream<main, [4, 8], [8], f32>, memref<4x32xf32>
  %v = fetch.fetch %x : memref<4x64xf32> -> !fetch.stream<main, [4], [64], f32>
  %vc = rngd.collect %v : !fetch.stream<main, [4], [64], f32> -> !fetch.stream<main, [4, 8], [8], f32>
  %sc = fetch.fetch %s {map = affine_map<(t, f, p) -> (t, f + p)>} : memref<4x8xf32> -> !fetch.stream<main, [4, 8], [1], f32>
  // expected-error @+1 {{'rngd.block_scale' op block 16 does not divide the innermost packet dim 8}}
  %y = rngd.block_scale %vc, %sc {block = 16} : !fetch.stream<main, [4, 8], [8], f32>, !fetch.stream<main, [4, 8], [1], f32> -> !fetch.stream<main, [4, 8], [8], f32>
  rngd.commit %y, %ox : !fetch.stream<main, [4, 8], [8], f32>, memref<4x64xf32>
  func.return
}

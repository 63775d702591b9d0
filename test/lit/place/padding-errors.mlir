// fetch-place-dm's errors for padded fetches (ir.md §2a, hardware.md §2.0):
// padding bytes (the padded extent outside the tensor's own bytes) that
// overlap another tensor (at the padded fetch, naming both and the bytes), and
// padding that reaches below DM address 0 from an explicit placement.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-place-dm

// %b sits where %a's rows 92 to 95 are read as padding (bytes 2944 to 3071).
// expected-note @+1 {{%a and %b are arguments of this kernel}}
func.func @into_the_next(%a: memref<92x32xi8> {rngd.dm_base = 0 : i64},
                         %b: memref<8xi8> {rngd.dm_base = 2944 : i64}, %o: memref<96x32xi8>, %o2: memref<8xi8>) {
  // expected-error @+1 {{'fetch.fetch' op reads padding after %a, DM bytes 0xb80 to 0xbff, which overlap %b (bytes 0xb80 to 0xb87): a padded fetch would read that tensor as padding; place %b outside %a's padded extent (0x0 to 0xbff), or let fetch-place-dm place it}}
  %s = fetch.fetch %a {pad = #fetch.pad<dim = 0, size = 96>} : memref<92x32xi8> -> !fetch.stream<main, [96], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [96], [32], i8>, memref<96x32xi8>
  %t = fetch.fetch %b : memref<8xi8> -> !fetch.stream<main, [], [8], i8>
  rngd.commit %t, %o2 : !fetch.stream<main, [], [8], i8>, memref<8xi8>
  func.return
}

// -----

// An explicit base 0 with a left pad: the padding would start below address 0.
// expected-error @+1 {{'func.func' op placing %a (3066 bytes, 3072 bytes with the padding its fetches read) at 0x0 (its rngd.dm_base) puts its lowest byte at -0x2, below DM address 0 (its layout and padding reach 2 bytes below its base): place it at 8 or higher, or pad less on the left}}
func.func @left_at_zero(%a: memref<32x90xi8, strided<[96, 1]>> {rngd.dm_base = 0 : i64}, %o: memref<32x96xi8>) {
  %s = fetch.fetch %a {map = affine_map<(r, p) -> (r, p - 2)>, pad = #fetch.pad<dim = 1, left = 2, size = 96>}
      : memref<32x90xi8, strided<[96, 1]>> -> !fetch.stream<main, [32], [96], i8>
  %m = fetch.mask %s : !fetch.stream<main, [32], [96], i8> -> !fetch.stream<main, [32], [96], i8>
  rngd.commit %m, %o : !fetch.stream<main, [32], [96], i8>, memref<32x96xi8>
  func.return
}

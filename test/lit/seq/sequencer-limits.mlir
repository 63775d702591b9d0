// Every Fetch Sequencer limit of ir.md §3 rule 8 (hardware.md §3) is a
// located error on the fetch.fetch, stating the numbers, from the verifier
// alone (-p '' runs no pass).
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p ''
// And the same through the default pipeline (the verifier runs first).
// RUN: %fetchc %s --split-input-file --verify-diagnostics

// Nine dims, none of which merge (each stride is 4x the one inside it, the
// inner size is 2): 9 entries, the table holds 8.
func.func @nine_entries(%b: memref<2x2x2x2x2x2x2x2x2xi8, strided<[65536, 16384, 4096, 1024, 256, 64, 16, 4, 1]>>, %o: memref<512xi8>) {
  // expected-error @+1 {{'fetch.fetch' op needs 9 sequencer entries, but the table holds 8}}
  %s = fetch.fetch %b {base = 4096 : i64} : memref<2x2x2x2x2x2x2x2x2xi8, strided<[65536, 16384, 4096, 1024, 256, 64, 16, 4, 1]>> -> !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2, 2], [2], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2, 2], [2], i8>, memref<512xi8>
  func.return
}

// -----

// Seven dims that do not merge plus one of 131072 elements, which must be
// split into [2 : 65536, 65536 : 1]: 9 entries again.
func.func @nine_after_split(%b: memref<2x2x2x2x2x2x2x131072xi8, strided<[1073741824, 268435456, 67108864, 16777216, 4194304, 1048576, 262144, 1]>>, %o: memref<16777216xi8>) {
  // expected-error @+1 {{'fetch.fetch' op needs 9 sequencer entries, but the table holds 8}}
  %s = fetch.fetch %b {map = affine_map<(a, b, c, d, e, f, g, t, p) -> (a, b, c, d, e, f, g, t + p)>} : memref<2x2x2x2x2x2x2x131072xi8, strided<[1073741824, 268435456, 67108864, 16777216, 4194304, 1048576, 262144, 1]>> -> !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2, 131072], [1], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2, 131072], [1], i8>, memref<16777216xi8>
  func.return
}

// -----

// Eight dims that do not merge are fine: exactly 8 entries.
func.func @eight_entries(%b: memref<2x2x2x2x2x2x2x2xi8, strided<[16384, 4096, 1024, 256, 64, 16, 4, 1]>>, %o: memref<256xi8>) {
  %s = fetch.fetch %b {base = 4096 : i64} : memref<2x2x2x2x2x2x2x2xi8, strided<[16384, 4096, 1024, 256, 64, 16, 4, 1]>> -> !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2], [2], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2, 2, 2, 2, 2, 2, 2], [2], i8>, memref<256xi8>
  func.return
}

// -----

// 65537 is prime: it has no split into two entries of at most 65536.
func.func @prime(%b: memref<65537xi8>, %o: memref<65537xi8>) {
  // expected-error @+1 {{'fetch.fetch' op dimension of 65537 elements cannot be split into sequencer entries of at most 65536}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t + p)>} : memref<65537xi8> -> !fetch.stream<main, [65537], [1], i8>
  rngd.commit %s, %o : !fetch.stream<main, [65537], [1], i8>, memref<65537xi8>
  func.return
}

// -----

// The packet walks a column: innermost entry [16 : 32] is not contiguous.
func.func @not_contiguous(%b: memref<16x32xi8>, %o: memref<512xi8>) {
  // expected-error @+1 {{'fetch.fetch' op innermost sequencer entry [16 : 32] is not contiguous: a packet of 16 elements needs innermost stride 0 or 1}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (p, t)>} : memref<16x32xi8> -> !fetch.stream<main, [32], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [32], [16], i8>, memref<512xi8>
  func.return
}

// -----

// A packet of two 4-element row pieces 16 apart: the innermost entry [4 : 1]
// is contiguous but smaller than the 8-element packet.  Legal (hardware.md §3,
// the furiosa-opt book's non-contiguous packets): each 4-byte read stays in
// one row piece, two reads per packet.
func.func @packet_of_two_runs(%b: memref<8x4xi8, strided<[16, 1]>>, %o: memref<32xi8>) {
  %s = fetch.fetch %b {map = affine_map<(t, a, e) -> (t * 2 + a, e)>} : memref<8x4xi8, strided<[16, 1]>> -> !fetch.stream<main, [4], [2, 4], i8>
  rngd.commit %s, %o : !fetch.stream<main, [4], [2, 4], i8>, memref<32xi8>
  func.return
}

// -----

func.func @base_alignment(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch.fetch' op base 4100 is not a multiple of 8 bytes}}
  %s = fetch.fetch %b {base = 4100 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}

// -----

func.func @base_too_high(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch.fetch' op base 524288 (0x80000) is not below 2^19 = 524288, the size of one slice's DM (16 banks x 4096 rows x 8 bytes); place the tensor lower, or split it over slices (rngd.slices, rngd.slice_dim)}}
  %s = fetch.fetch %b {base = 524288 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}

// -----

// The last legal base: 2^19 - 8, with a 64-byte tensor ending past one slice's DM.
func.func @end_past_dm(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch.fetch' op the fetch reaches DM byte addresses [524280, 524343], outside [0, 2^19 = 524288): address outside one slice's DM}}
  %s = fetch.fetch %b {base = 524280 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}

// -----

// A 4-bit read starting at element 3: the high nibble of byte 1.
func.func @odd_nibble(%b: memref<64xi4>, %o: memref<32xi4>) {
  // expected-error @+1 {{'fetch.fetch' op odd 4-bit element offset 3 is not addressable: element 2i is the low nibble of byte i}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 16 + p + 3)>} : memref<64xi4> -> !fetch.stream<main, [2], [16], i4>
  rngd.commit %s, %o : !fetch.stream<main, [2], [16], i4>, memref<32xi4>
  func.return
}

// -----

// The same through a strided<> layout offset.
func.func @odd_nibble_layout(%b: memref<32xf4E2M1FN, strided<[1], offset: 5>>, %o: memref<32xf4E2M1FN>) {
  // expected-error @+1 {{'fetch.fetch' op odd 4-bit element offset 5 is not addressable}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 16 + p)>} : memref<32xf4E2M1FN, strided<[1], offset: 5>> -> !fetch.stream<main, [2], [16], f4E2M1FN>
  rngd.commit %s, %o : !fetch.stream<main, [2], [16], f4E2M1FN>, memref<32xf4E2M1FN>
  func.return
}

// -----

// Index 0 reaches 8 + 63 = 71 in a dimension of 64.
func.func @outside(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch.fetch' op index 0 of the memref reaches [8, 71] but the dimension has size 64: address outside the memref}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p + 8)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [2], [32], i8>, memref<64xi8>
  func.return
}

// -----

// A negative stride walking below index 0.
func.func @outside_negative(%b: memref<16x32xi8>, %o: memref<512xi8>) {
  // expected-error @+1 {{'fetch.fetch' op index 0 of the memref reaches [-1, 14] but the dimension has size 16: address outside the memref}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (14 - t, p)>} : memref<16x32xi8> -> !fetch.stream<main, [16], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [16], [32], i8>, memref<512xi8>
  func.return
}

// -----

// One 4-bit element per packet is half a byte: no legal read size.
func.func @single_nibble(%b: memref<64xi4>, %o: memref<64xi4>) {
  // expected-error @+1 {{'fetch.fetch' op no legal read size: no divisor of the max access size 1 (gcd of the packet size 1 and the contiguous run 64) is 1, 2, 4, 8, 16 or 32 whole bytes of i4}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t + p)>} : memref<64xi4> -> !fetch.stream<main, [64], [1], i4>
  rngd.commit %s, %o : !fetch.stream<main, [64], [1], i4>, memref<64xi4>
  func.return
}

// -----

// A pinned read size of 16 i8 casts to 64 bytes of i32: two flits.
func.func @pinned_cast(%b: memref<64xi8>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch.fetch' op read_size 16 of i8 casts to 16 x 4 = 64 bytes of i32, more than one 32-byte flit}}
  %s = fetch.fetch %b {read_size = 16 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xi8> -> !fetch.stream<main, [2], [32], i8>
  %c = fetch.cast %s : !fetch.stream<main, [2], [32], i8> -> !fetch.stream<main, [2], [32], i32>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], i32>, memref<64xi32>
  func.return
}

// -----

// The pinned cast limit seen through a fetch.convert that legalises to the
// lookup + cast of e2m1 -> f32 (16 codes -> 64 bytes of f32).
func.func @pinned_cast_convert(%b: memref<64xf4E2M1FN>, %o: memref<64xf32>) {
  // expected-error @+1 {{'fetch.fetch' op read_size 16 of f4E2M1FN casts to 16 x 4 = 64 bytes of f32, more than one 32-byte flit}}
  %s = fetch.fetch %b {read_size = 16 : i64, map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf4E2M1FN> -> !fetch.stream<main, [2], [32], f4E2M1FN>
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], f4E2M1FN> -> !fetch.stream<main, [2], [32], f32>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], f32>, memref<64xf32>
  func.return
}

// -----

// ... and through a fetch.dequant (whose split casts the decoded codes to f32).
func.func @pinned_cast_dequant(%w: memref<64x32xf4E2M1FN>, %s: memref<64x1xf8E8M0FNU>, %o: memref<64x32xf32>) {
  // expected-error @+1 {{'fetch.fetch' op read_size 32 of f4E2M1FN casts to 32 x 4 = 128 bytes of f32, more than one 32-byte flit}}
  %c = fetch.fetch %w {read_size = 32 : i64} : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  %d = fetch.dequant %c, %s {format = "mxfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E8M0FNU> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %d, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// The sub context always reads 8 bytes = 16 i4; cast to i32 that is 64
// bytes.  Through fetch.cast ...
func.func @sub_cast(%b: memref<64xi4>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch.fetch' op the sub Fetch Unit reads exactly 8 bytes = 16 i4 elements, which cast to 16 x 4 = 64 bytes of i32, more than one 32-byte flit}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 16 + p)>} : memref<64xi4> -> !fetch.stream<sub, [4], [16], i4>
  %c = fetch.cast %s : !fetch.stream<sub, [4], [16], i4> -> !fetch.stream<sub, [4], [16], i32>
  rngd.commit %c, %o : !fetch.stream<sub, [4], [16], i32>, memref<64xi32>
  func.return
}

// -----

// ... and through a fetch.convert that legalises to that cast.
func.func @sub_convert(%b: memref<64xi4>, %o: memref<64xi32>) {
  // expected-error @+1 {{'fetch.fetch' op the sub Fetch Unit reads exactly 8 bytes = 16 i4 elements, which cast to 16 x 4 = 64 bytes of i32, more than one 32-byte flit}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 16 + p)>} : memref<64xi4> -> !fetch.stream<sub, [4], [16], i4>
  %c = fetch.convert %s : !fetch.stream<sub, [4], [16], i4> -> !fetch.stream<sub, [4], [16], i32>
  rngd.commit %c, %o : !fetch.stream<sub, [4], [16], i32>, memref<64xi32>
  func.return
}

// -----

// i8 -> i32 on sub: 8 bytes = 8 i8 -> 32 bytes of i32, exactly one flit: fine.
func.func @sub_cast_fits(%b: memref<64xi8>, %o: memref<64xi32>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 16 + p)>} : memref<64xi8> -> !fetch.stream<sub, [4], [16], i8>
  %c = fetch.convert %s : !fetch.stream<sub, [4], [16], i8> -> !fetch.stream<sub, [4], [16], i32>
  rngd.commit %c, %o : !fetch.stream<sub, [4], [16], i32>, memref<64xi32>
  func.return
}

// -----

// A sub packet of 4 bytes is not a whole number of 8-byte reads.
func.func @sub_packet(%b: memref<64xi8>, %o: memref<64xi8>) {
  // expected-error @+1 {{'fetch.fetch' op the sub Fetch Unit reads exactly 8 bytes; a packet of 4 i8 elements (4 bytes) is not a whole number of 8-byte reads}}
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 4 + p)>} : memref<64xi8> -> !fetch.stream<sub, [16], [4], i8>
  rngd.commit %s, %o : !fetch.stream<sub, [16], [4], i8>, memref<64xi8>
  func.return
}

// -----

// A pinned read size that does not divide the max access size.
func.func @pinned_divide(%b: memref<48xi8>, %o: memref<48xi8>) {
  // expected-error @+1 {{'fetch.fetch' op read_size 16 does not divide the max access size 8 (gcd of the packet size 8 and the contiguous run 48)}}
  %s = fetch.fetch %b {read_size = 16 : i64, map = affine_map<(t, p) -> (t * 8 + p)>} : memref<48xi8> -> !fetch.stream<main, [6], [8], i8>
  rngd.commit %s, %o : !fetch.stream<main, [6], [8], i8>, memref<48xi8>
  func.return
}

// ir.md §3 rule 3: an i5/i9 stream may be consumed only by rngd.switch,
// rngd.collect (whose results stay bound) and rngd.contract_outer.  Any other
// consumer is an error at that consumer, with a note at the fetch.zp_sub that
// produced it.  A consumer outside fetch/rngd (func.return, test.op) has no
// verifier of ours: the error is then at the producer, with a note at the use.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: zp_sub -> switch -> collect -> contract_outer, for i9 and i5.
func.func @through_switch_and_collect(%a: memref<64x32xi8>, %b: memref<64x32xi4>, %t8: !rngd.trf<i8>, %t4: !rngd.trf<i4>,
                                      %oa: memref<64x32xi32>, %ob: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %sw = rngd.switch %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  %co = rngd.collect %sw : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  %acc = rngd.contract_outer %co, %t8 : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %acc, %oa : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %n = fetch.fetch %b : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %m = fetch.zp_sub %n, -8 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %c5 = rngd.collect %m : !fetch.stream<main, [64], [32], i5> -> !fetch.stream<main, [64], [32], i5>
  %acc5 = rngd.contract_outer %c5, %t4 : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %acc5, %ob : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @commit_i9(%a: memref<64x32xi8>, %o: memref<64x32xi16>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.commit' op cannot commit an i9 stream to memory: i9 is the Contraction Engine's staging type, and its only consumer is rngd.contract_outer (through rngd.switch / rngd.collect); it cannot be committed to memory, stored to TRF or VRF, transposed, or fed to any other engine; to use the values elsewhere, widen the i8 stream with fetch.cast (i8 -> i32) instead of fetch.zp_sub and subtract the zero point downstream}}
  rngd.commit %z, %o : !fetch.stream<main, [64], [32], i9>, memref<64x32xi16>
  func.return
}

// -----

func.func @to_trf_i5(%a: memref<64x32xi4>) -> !rngd.trf<i5> {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-note @+1 {{the i5 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 7 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  // expected-error @+1 {{'rngd.to_trf' op cannot store an i5 stream to the TRF: i5 is the Contraction Engine's staging type}}
  %t = rngd.to_trf %z : !fetch.stream<main, [64], [32], i5> -> !rngd.trf<i5>
  func.return %t : !rngd.trf<i5>
}

// -----

func.func @to_vrf_i9(%a: memref<64x32xi8>) -> !rngd.vrf<[64, 32], i9> {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.to_vrf' op cannot store an i9 stream to the VRF: i9 is the Contraction Engine's staging type}}
  %v = rngd.to_vrf %z : !fetch.stream<main, [64], [32], i9> -> !rngd.vrf<[64, 32], i9>
  func.return %v : !rngd.vrf<[64, 32], i9>
}

// -----

func.func @transpose_i9(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<32x64xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.transpose' op cannot transpose an i9 stream: i9 is the Contraction Engine's staging type}}
  %tr = rngd.transpose %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [32], [64], i9>
  %acc = rngd.contract_outer %tr, %t : !fetch.stream<main, [32], [64], i9>, !rngd.trf<i8> -> !fetch.stream<main, [32], [64], i32>
  rngd.commit %acc, %o : !fetch.stream<main, [32], [64], i32>, memref<32x64xi32>
  func.return
}

// -----

// Through rngd.switch and rngd.collect the stream stays bound; the note still
// points at the fetch.zp_sub.
func.func @commit_after_switch_collect(%a: memref<64x32xi4>, %o: memref<64x32xi8>) {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-note @+1 {{the i5 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, -8 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %sw = rngd.switch %z : !fetch.stream<main, [64], [32], i5> -> !fetch.stream<main, [64], [32], i5>
  %co = rngd.collect %sw : !fetch.stream<main, [64], [32], i5> -> !fetch.stream<main, [64], [32], i5>
  // expected-error @+1 {{'rngd.commit' op cannot commit an i5 stream to memory}}
  rngd.commit %co, %o : !fetch.stream<main, [64], [32], i5>, memref<64x32xi8>
  func.return
}

// -----

func.func @to_trf_after_switch(%a: memref<64x32xi8>) -> !rngd.trf<i9> {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 0 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %sw = rngd.switch %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.to_trf' op cannot store an i9 stream to the TRF}}
  %t = rngd.to_trf %sw : !fetch.stream<main, [64], [32], i9> -> !rngd.trf<i9>
  func.return %t : !rngd.trf<i9>
}

// -----

// The Vector Engine cannot take i9 either.
func.func @block_scale_i9(%a: memref<64x32xi8>, %b: memref<64x2xf32>, %o: memref<64x32xf32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %s = fetch.fetch %b : memref<64x2xf32> -> !fetch.stream<main, [64], [2], f32>
  // expected-error @+1 {{'rngd.block_scale' op cannot scale an i9 stream in the Vector Engine}}
  %x = rngd.block_scale %z, %s {block = 16 : i64} : !fetch.stream<main, [64], [32], i9>, !fetch.stream<main, [64], [2], f32> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %x, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// A consumer outside fetch/rngd: the error is at the producer, the note at the use.
func.func @returned_i9(%a: memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i9> {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op its result stream of i9 reaches 'func.return', but i9 is the Contraction Engine's staging type: its only consumer is rngd.contract_outer (through rngd.switch / rngd.collect); to use the values elsewhere, widen the i8 stream with fetch.cast (i8 -> i32) instead}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-note @+1 {{used here}}
  func.return %z : !fetch.stream<main, [64], [32], i9>
}

// -----

func.func @returned_i5_after_collect(%a: memref<64x32xi4>) -> !fetch.stream<main, [64], [32], i5> {
  %q = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-note @+1 {{the i5 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  // expected-error @+1 {{'rngd.collect' op its result stream of i5 reaches 'func.return', but i5 is the Contraction Engine's staging type}}
  %c = rngd.collect %z : !fetch.stream<main, [64], [32], i5> -> !fetch.stream<main, [64], [32], i5>
  // expected-note @+1 {{used here}}
  func.return %c : !fetch.stream<main, [64], [32], i5>
}

// -----

func.func @other_dialect_i9(%a: memref<64x32xi8>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'fetch.zp_sub' op its result stream of i9 reaches 'test.op', but i9 is the Contraction Engine's staging type}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-note @+1 {{used here}}
  "test.op"(%z) : (!fetch.stream<main, [64], [32], i9>) -> ()
  func.return
}

// -----

// fetch.convert is no way out either.
func.func @convert_i9(%a: memref<64x32xi8>, %o: memref<64x32xi32>) {
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'fetch.convert' op cannot convert an i9 stream: i9 is the Contraction Engine's staging type}}
  %c = fetch.convert %z : !fetch.stream<main, [64], [32], i9> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %c, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// Nor as the block scales of the Vector Engine.
func.func @i9_as_block_scales(%a: memref<64x32xf32>, %b: memref<64x2xi8>, %o: memref<64x32xf32>) {
  %x = fetch.fetch %a : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  %q = fetch.fetch %b : memref<64x2xi8> -> !fetch.stream<main, [64], [2], i8>
  // expected-note @+1 {{the i9 stream is produced here by zero-point subtraction}}
  %z = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [2], i8> -> !fetch.stream<main, [64], [2], i9>
  // expected-error @+1 {{'rngd.block_scale' op cannot use an i9 stream as block scales: i9 is the Contraction Engine's staging type}}
  %y = rngd.block_scale %x, %z {block = 16 : i64} : !fetch.stream<main, [64], [32], f32>, !fetch.stream<main, [64], [2], i9> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

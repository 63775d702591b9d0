// ir.md §3 rule 10 (hardware.md §2.6): rngd.contract_outer pairs its stream
// with its TRF exactly as the Contraction Engine's operand table says:
//
//   stream        TRF           accumulator
//   i4 or i5      i4 or i5      i32
//   i8 or i9      i8 or i9      i32
//   f8E4M3FN      f8E4M3FN      f32
//   f8E5M2        f8E5M2        f32
//   bf16          bf16          f32
//
// No pair crosses integer families or kinds, a float pair matches exactly,
// and the accumulator is the table's.  The error is at the rngd.contract_outer
// and names the TRF types the stream takes (or the streams the engine takes).
// Rule 10 is the last rule: an op that breaks an earlier one reports that.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: every pair of the table.
func.func @every_pair(%a0: memref<64x32xi4>, %t0: !rngd.trf<i4>, %o0: memref<64x32xi32>,
                       %a1: memref<64x32xi4>, %t1: !rngd.trf<i5>, %o1: memref<64x32xi32>,
                       %a2: memref<64x32xi4>, %t2: !rngd.trf<i4>, %o2: memref<64x32xi32>,
                       %a3: memref<64x32xi4>, %t3: !rngd.trf<i5>, %o3: memref<64x32xi32>,
                       %a4: memref<64x32xi8>, %t4: !rngd.trf<i8>, %o4: memref<64x32xi32>,
                       %a5: memref<64x32xi8>, %t5: !rngd.trf<i9>, %o5: memref<64x32xi32>,
                       %a6: memref<64x32xi8>, %t6: !rngd.trf<i8>, %o6: memref<64x32xi32>,
                       %a7: memref<64x32xi8>, %t7: !rngd.trf<i9>, %o7: memref<64x32xi32>,
                       %a8: memref<64x32xf8E4M3FN>, %t8: !rngd.trf<f8E4M3FN>, %o8: memref<64x32xf32>,
                       %a9: memref<64x32xf8E5M2>, %t9: !rngd.trf<f8E5M2>, %o9: memref<64x32xf32>,
                       %a10: memref<64x32xbf16>, %t10: !rngd.trf<bf16>, %o10: memref<64x32xf32>) {
  %s0 = fetch.fetch %a0 : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %y0 = rngd.contract_outer %s0, %t0 : !fetch.stream<main, [64], [32], i4>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y0, %o0 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s1 = fetch.fetch %a1 : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %y1 = rngd.contract_outer %s1, %t1 : !fetch.stream<main, [64], [32], i4>, !rngd.trf<i5> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y1, %o1 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s2 = fetch.fetch %a2 : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %z2 = fetch.zp_sub %s2, 1 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %y2 = rngd.contract_outer %z2, %t2 : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y2, %o2 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s3 = fetch.fetch %a3 : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %z3 = fetch.zp_sub %s3, 1 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  %y3 = rngd.contract_outer %z3, %t3 : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i5> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y3, %o3 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s4 = fetch.fetch %a4 : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %y4 = rngd.contract_outer %s4, %t4 : !fetch.stream<main, [64], [32], i8>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y4, %o4 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s5 = fetch.fetch %a5 : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %y5 = rngd.contract_outer %s5, %t5 : !fetch.stream<main, [64], [32], i8>, !rngd.trf<i9> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y5, %o5 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s6 = fetch.fetch %a6 : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z6 = fetch.zp_sub %s6, 1 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %y6 = rngd.contract_outer %z6, %t6 : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y6, %o6 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s7 = fetch.fetch %a7 : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z7 = fetch.zp_sub %s7, 1 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  %y7 = rngd.contract_outer %z7, %t7 : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i9> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y7, %o7 : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  %s8 = fetch.fetch %a8 : memref<64x32xf8E4M3FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  %y8 = rngd.contract_outer %s8, %t8 : !fetch.stream<main, [64], [32], f8E4M3FN>, !rngd.trf<f8E4M3FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y8, %o8 : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  %s9 = fetch.fetch %a9 : memref<64x32xf8E5M2> -> !fetch.stream<main, [64], [32], f8E5M2>
  %y9 = rngd.contract_outer %s9, %t9 : !fetch.stream<main, [64], [32], f8E5M2>, !rngd.trf<f8E5M2> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y9, %o9 : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  %s10 = fetch.fetch %a10 : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  %y10 = rngd.contract_outer %s10, %t10 : !fetch.stream<main, [64], [32], bf16>, !rngd.trf<bf16> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y10, %o10 : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// Crossing integer families: i9 residuals against i4 weights, i5 against i8, i4 against i9.
func.func @i9_with_i4(%a: memref<64x32xi8>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an i9 stream with a TRF of i4, a pair the Contraction Engine does not have: an i9 stream takes a TRF of i8 or i9 (hardware.md §2.6)}}
  %y = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i5_with_i8(%a: memref<64x32xi4>, %t: !rngd.trf<i8>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an i5 stream with a TRF of i8, a pair the Contraction Engine does not have: an i5 stream takes a TRF of i4 or i5 (hardware.md §2.6)}}
  %y = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i4_with_i9(%a: memref<64x32xi4>, %t: !rngd.trf<i9>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an i4 stream with a TRF of i9, a pair the Contraction Engine does not have: an i4 stream takes a TRF of i4 or i5 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], i4>, !rngd.trf<i9> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @i8_with_i4(%a: memref<64x32xi8>, %t: !rngd.trf<i4>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an i8 stream with a TRF of i4, a pair the Contraction Engine does not have: an i8 stream takes a TRF of i8 or i9 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], i8>, !rngd.trf<i4> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

// Integer with float, both ways.
func.func @i8_with_bf16(%a: memref<64x32xi8>, %t: !rngd.trf<bf16>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an i8 stream with a TRF of bf16, a pair the Contraction Engine does not have: an i8 stream takes a TRF of i8 or i9 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], i8>, !rngd.trf<bf16> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @bf16_with_i8(%a: memref<64x32xbf16>, %t: !rngd.trf<i8>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  // expected-error @+1 {{'rngd.contract_outer' op contracts a bf16 stream with a TRF of i8, a pair the Contraction Engine does not have: a bf16 stream takes a TRF of bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], bf16>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// A float pair must match exactly.
func.func @bf16_with_f8(%a: memref<64x32xbf16>, %t: !rngd.trf<f8E4M3FN>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  // expected-error @+1 {{'rngd.contract_outer' op contracts a bf16 stream with a TRF of f8E4M3FN, a pair the Contraction Engine does not have: a bf16 stream takes a TRF of bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], bf16>, !rngd.trf<f8E4M3FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @e4m3_with_e5m2(%a: memref<64x32xf8E4M3FN>, %t: !rngd.trf<f8E5M2>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf8E4M3FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an f8E4M3FN stream with a TRF of f8E5M2, a pair the Contraction Engine does not have: an f8E4M3FN stream takes a TRF of f8E4M3FN (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f8E4M3FN>, !rngd.trf<f8E5M2> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @e5m2_with_e4m3(%a: memref<64x32xf8E5M2>, %t: !rngd.trf<f8E4M3FN>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf8E5M2> -> !fetch.stream<main, [64], [32], f8E5M2>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an f8E5M2 stream with a TRF of f8E4M3FN, a pair the Contraction Engine does not have: an f8E5M2 stream takes a TRF of f8E5M2 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f8E5M2>, !rngd.trf<f8E4M3FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @e5m2_with_bf16(%a: memref<64x32xf8E5M2>, %t: !rngd.trf<bf16>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf8E5M2> -> !fetch.stream<main, [64], [32], f8E5M2>
  // expected-error @+1 {{'rngd.contract_outer' op contracts an f8E5M2 stream with a TRF of bf16, a pair the Contraction Engine does not have: an f8E5M2 stream takes a TRF of f8E5M2 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f8E5M2>, !rngd.trf<bf16> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// A TRF of a type the hardware lacks.
func.func @trf_f16(%a: memref<64x32xbf16>, %t: !rngd.trf<f16>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  // expected-error @+1 {{'rngd.contract_outer' op contracts a bf16 stream with a TRF of f16, a pair the Contraction Engine does not have: a bf16 stream takes a TRF of bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], bf16>, !rngd.trf<f16> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// Streams the Contraction Engine does not take (whatever the TRF).
func.func @stream_f32(%a: memref<64x32xf32>, %t: !rngd.trf<f32>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  // expected-error @+1 {{'rngd.contract_outer' op cannot contract an f32 stream: the Contraction Engine takes streams of i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f32>, !rngd.trf<f32> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @stream_i16(%a: memref<64x32xi16>, %t: !rngd.trf<i16>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi16> -> !fetch.stream<main, [64], [32], i16>
  // expected-error @+1 {{'rngd.contract_outer' op cannot contract an i16 stream: the Contraction Engine takes streams of i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], i16>, !rngd.trf<i16> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @stream_i32(%a: memref<64x32xi32>, %t: !rngd.trf<i32>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xi32> -> !fetch.stream<main, [64], [32], i32>
  // expected-error @+1 {{'rngd.contract_outer' op cannot contract an i32 stream: the Contraction Engine takes streams of i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], i32>, !rngd.trf<i32> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @stream_f4E2M1FN(%a: memref<64x32xf4E2M1FN>, %t: !rngd.trf<f4E2M1FN>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'rngd.contract_outer' op cannot contract an f4E2M1FN stream: the Contraction Engine takes streams of i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f4E2M1FN>, !rngd.trf<f4E2M1FN> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @stream_f8E8M0FNU(%a: memref<64x32xf8E8M0FNU>, %t: !rngd.trf<f8E8M0FNU>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf8E8M0FNU> -> !fetch.stream<main, [64], [32], f8E8M0FNU>
  // expected-error @+1 {{'rngd.contract_outer' op cannot contract an f8E8M0FNU stream: the Contraction Engine takes streams of i4/i5, i8/i9, f8E4M3FN, f8E5M2 or bf16 (hardware.md §2.6)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f8E8M0FNU>, !rngd.trf<f8E8M0FNU> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// The accumulator is the table's.
func.func @acc_i9_f32(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
  // expected-error @+1 {{'rngd.contract_outer' op accumulates i9 into i32, not f32}}
  %y = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @acc_i5_i16(%a: memref<64x32xi4>, %t: !rngd.trf<i5>, %o: memref<64x32xi16>) {
  %s = fetch.fetch %a : memref<64x32xi4> -> !fetch.stream<main, [64], [32], i4>
  %z = fetch.zp_sub %s, 1 : !fetch.stream<main, [64], [32], i4> -> !fetch.stream<main, [64], [32], i5>
  // expected-error @+1 {{'rngd.contract_outer' op accumulates i5 into i32, not i16}}
  %y = rngd.contract_outer %z, %t : !fetch.stream<main, [64], [32], i5>, !rngd.trf<i5> -> !fetch.stream<main, [64], [32], i16>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i16>, memref<64x32xi16>
  func.return
}

// -----

func.func @acc_bf16_i32(%a: memref<64x32xbf16>, %t: !rngd.trf<bf16>, %o: memref<64x32xi32>) {
  %s = fetch.fetch %a : memref<64x32xbf16> -> !fetch.stream<main, [64], [32], bf16>
  // expected-error @+1 {{'rngd.contract_outer' op accumulates bf16 into f32, not i32}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], bf16>, !rngd.trf<bf16> -> !fetch.stream<main, [64], [32], i32>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
  func.return
}

// -----

func.func @acc_e4m3_bf16(%a: memref<64x32xf8E4M3FN>, %t: !rngd.trf<f8E4M3FN>, %o: memref<64x32xbf16>) {
  %s = fetch.fetch %a : memref<64x32xf8E4M3FN> -> !fetch.stream<main, [64], [32], f8E4M3FN>
  // expected-error @+1 {{'rngd.contract_outer' op accumulates f8E4M3FN into f32, not bf16}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f8E4M3FN>, !rngd.trf<f8E4M3FN> -> !fetch.stream<main, [64], [32], bf16>
  rngd.commit %y, %o : !fetch.stream<main, [64], [32], bf16>, memref<64x32xbf16>
  func.return
}

// -----

// Rule 10 comes last: an accumulator nobody uses breaks rule 6 first, and
// that is the one error the op reports.
func.func @rule6_first(%a: memref<64x32xi8>, %t: !rngd.trf<bf16>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  // expected-error @+1 {{'rngd.contract_outer' op its result stream is never used: every stream must be consumed exactly once (by an adapter stage, an rngd engine op, or rngd.commit)}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], i8>, !rngd.trf<bf16> -> !fetch.stream<main, [64], [32], i32>
  func.return
}

// -----

// A context change is rule 7 (types agree), before rule 10.
func.func @context_first(%a: memref<64x32xf32>, %t: !rngd.trf<f32>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %a : memref<64x32xf32> -> !fetch.stream<main, [64], [32], f32>
  // expected-error @+1 {{'rngd.contract_outer' op the accumulator stream stays in its input's context}}
  %y = rngd.contract_outer %s, %t : !fetch.stream<main, [64], [32], f32>, !rngd.trf<f32> -> !fetch.stream<sub, [64], [32], f32>
  rngd.commit %y, %o : !fetch.stream<sub, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// SiLU on asymmetric int8 activations: dequantise and activate in one lookup
// ==========================================================================
//
// int8 activations quantised with a scale of 1/32 and a zero point of -12
// (x = (q + 12) / 32) are dequantised and put through SiLU, x * sigmoid(x),
// by one function table (hardware.md §2.1b): every i8 key k maps to
// bf16(f32(silu((k - zero_point) * scale))), 256 entries baked at compile
// time.  No Vector Engine dequantisation, no activation pass: the stream
// leaves the adapter as bf16 and is committed to DM.
//
//   DM address  size     tensor
//   0x00000000  32 KiB   q    memref<128x256xi8>
//   0x00008000  64 KiB   out  memref<128x256xbf16>
//
// Compile:  fetchc int8_silu_dequant.mlir -o silu.bin && fetchc dis silu.bin
//
//   table 0: silu, i8 -> bf16 (function 6, scale 0.03125, zero_point -12)
//   program 0 "silu_dequant/0": main, i8 -> bf16, base 0x0,
//     [32768 : 1] : 64, fetch_size 32, 2 words per packet,
//     stages table_lookup, table 0, flit_count 4 (64 x bf16 = 128 bytes).

func.func @silu_dequant(%q: memref<128x256xi8>, %out: memref<128x256xbf16>) {
  %s = fetch.fetch %q {map = affine_map<(t, p, e) -> (t, p * 64 + e)>}
      : memref<128x256xi8> -> !fetch.stream<main, [128, 4], [64], i8>
  %a = fetch.table_lookup %s {fn = "silu", scale = 0.03125 : f32, zero_point = -12 : i32}
      : !fetch.stream<main, [128, 4], [64], i8> -> !fetch.stream<main, [128, 4], [64], bf16>
  rngd.commit %a, %out : !fetch.stream<main, [128, 4], [64], bf16>, memref<128x256xbf16>
  func.return
}

// GeLU on FP8 activations, in the table-lookup stage
// ==================================================
//
// FP8 (E4M3) activations of a 64-token x 1024-hidden batch go through GeLU
// on their way from DM to the Vector Engine, for free: a function table
// (hardware.md §2.1b) maps every f8E4M3FN key to bf16(f32(gelu(x))),
// gelu(x) = 0.5 * x * (1 + erf(x / sqrt(2))), baked into seq.bin at compile
// time (256 entries; NaN keys give 0x7FC0).  A function table produces bf16
// only: the cast stage then widens it to f32 (bf16 -> f32, exact), and the
// stream is committed to DM as f32.
//
//   DM address  size     tensor
//   0x00000000  64 KiB   act  memref<64x1024xf8E4M3FN>
//   0x00010000  256 KiB  out  memref<64x1024xf32> (the commit's destination)
//
// No address is written here: fetch-place-dm places the arguments in order.
//
// Read pattern: each token row is 32 packets of 32 activations.
//
// Compile:  fetchc gelu_f8e4m3_activations.mlir -o gelu.bin && fetchc dis gelu.bin
//
//   table 0: gelu, f8E4M3FN -> bf16 (function 3, 1-byte keys, 256 entries)
//   program 0 "gelu/0": main, f8E4M3FN -> f32, base 0x0,
//     [65536 : 1] : 32, fetch_size 8 (a read's cast output must fit one
//     32-byte flit: 8 x f32), 4 words per packet, stages table_lookup and
//     type_conversion, table 0, type_conversion 5 (bf16 -> f32),
//     flit_count 4 (32 x f32 = 128 bytes).
//
// Run it (fetchc run): see the README's "Function tables" section.

func.func @gelu(%act: memref<64x1024xf8E4M3FN>, %out: memref<64x1024xf32>) {
  %a = fetch.fetch %act {map = affine_map<(t, p, e) -> (t, p * 32 + e)>}
      : memref<64x1024xf8E4M3FN> -> !fetch.stream<main, [64, 32], [32], f8E4M3FN>
  %g = fetch.table_lookup %a {fn = "gelu"}
      : !fetch.stream<main, [64, 32], [32], f8E4M3FN> -> !fetch.stream<main, [64, 32], [32], bf16>
  %w = fetch.cast %g : !fetch.stream<main, [64, 32], [32], bf16> -> !fetch.stream<main, [64, 32], [32], f32>
  rngd.commit %w, %out : !fetch.stream<main, [64, 32], [32], f32>, memref<64x1024xf32>
  func.return
}

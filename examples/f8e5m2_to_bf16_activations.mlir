// f8E5M2 -> bf16 activation decode
// ================================
//
// FP8 (E5M2) activations of a 128-token x 4096-hidden batch, widened to bf16
// on their way from DM to the consumers.  The Fetch Adapter has no
// 8-bit-float -> bf16 cast (hardware.md §2.2); fetch.convert legalises the
// request to the non-paired f8E5M2 -> bf16 table lookup (256 entries, one
// key byte decodes one element, every value exact).  The stream passes the
// Switch and Collect Engines and is committed to DM as bf16.
//
// The batch (512 KiB in, 1 MiB out) does not fit one slice's 512 KiB of DM
// (hardware.md §1a): the kernel runs on rngd.slices = 4 slices, 32 tokens
// each (rngd.slice_dim = 0; ir.md §2a).  One slice's DM:
//
//   DM address  size     tensor (one slice's part; whole tensor in brackets)
//   0x00000000  128 KiB  act  memref<32x4096xf8E5M2>  [128 x 4096]
//   0x00020000  256 KiB  out  memref<32x4096xbf16> (the commit's destination)  [128 x 4096]
//
// No address is written here: fetch-place-dm places the arguments in order,
// each at the next 64-byte boundary after the previous one (ir.md §2a).
//
// Read pattern: each token row is 128 packets of 32 activations.
//
// Compile:  fetchc f8e5m2_to_bf16_activations.mlir -o act.bin && fetchc dis act.bin
//
//   program 0 "decode_activations/0": main, f8E5M2 -> bf16, base 0x0,
//     [32 : 4096, 4096 : 1] : 32 (the 128 x 32 row merges into one entry;
//     merging the rows too would exceed 65536), fetch_size 32, 1 word per
//     packet, stages table_lookup, table 0 (non-paired f8E5M2 -> bf16),
//     flit_count 2 (32 x bf16 = 64 bytes).

func.func @decode_activations(%act: memref<32x4096xf8E5M2> {rngd.slice_dim = 0 : i64},
                              %out: memref<32x4096xbf16> {rngd.slice_dim = 0 : i64})
    attributes {rngd.slices = 4 : i64} {
  %a = fetch.fetch %act {map = affine_map<(t, p, e) -> (t, p * 32 + e)>}
      : memref<32x4096xf8E5M2> -> !fetch.stream<main, [32, 128], [32], f8E5M2>
  %b = fetch.convert %a
      : !fetch.stream<main, [32, 128], [32], f8E5M2> -> !fetch.stream<main, [32, 128], [32], bf16>
  %sw = rngd.switch %b : !fetch.stream<main, [32, 128], [32], bf16> -> !fetch.stream<main, [32, 128], [32], bf16>
  %co = rngd.collect %sw : !fetch.stream<main, [32, 128], [32], bf16> -> !fetch.stream<main, [32, 128], [32], bf16>
  rngd.commit %co, %out : !fetch.stream<main, [32, 128], [32], bf16>, memref<32x4096xbf16>
  func.return
}

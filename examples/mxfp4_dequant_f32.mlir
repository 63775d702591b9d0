// MXFP4 weight dequantisation to f32
// ==================================
//
// The MXFP4 twin of nvfp4_dequant_f32.mlir: a 4096 x 4096 MXFP4 weight
// (OCP microscaling: e2m1 codes, one f8E8M0FNU power-of-two scale per 32
// codes along the input axis, no tensor scale), decoded to f32 exactly
// (hardware.md §4):
//
//   w[o, i] = E2M1[code[o, i]] * 2^(e[o, i / 32] - 127)      (e = 0xFF: NaN)
//
// fetch-split-scaling lowers fetch.dequant {format = "mxfp4"} to
//
//   * the codes' fetch + paired lookup (e2m1 -> f8E4M3FN) + cast (-> f32):
//     program "dequant_mxfp4/0", on the main Fetch Unit;
//   * the raw f8E8M0FNU exponents, one per 32 codes, staged once through the
//     sub Fetch Unit into the VRF (hardware.md §4a): a sub-context fetch with
//     no adapter stage (the adapter has no e8m0 cast), 8-byte reads, 32
//     exponents (one flit) a packet, then rngd.collect and rngd.to_vrf:
//     program "dequant_mxfp4/1".  The 2048 exponents of a slice take 2 KiB
//     of its 8 KiB VRF (one byte each: the Vector Engine decodes them);
//   * rngd.block_scale, which reads the VRF, decodes 2^(e-127) and
//     multiplies, in the Vector Engine.  There is no rngd.tensor_scale:
//     MXFP4 has no tensor scale.
//
// The weight does not fit one slice's 512 KiB of DM (hardware.md §1a), so the
// kernel runs on rngd.slices = 256 slices, SPMD (ir.md §2a): each slice holds
// 16 rows of codes, their exponents and their f32 output at the same
// addresses, and runs the same two programs.  rngd.slice_dim = 0 splits each
// tensor by rows; the memref types are one slice's part.  One slice's DM:
//
//   DM address  size     tensor (one slice's part; whole tensor in brackets)
//   0x00000000  32 KiB   codes   packed codes  memref<16x4096xf4E2M1FN>  [4096 x 4096]
//   0x00008000  2 KiB    escale  block scales  memref<16x128xf8E8M0FNU>  [4096 x 128]
//   0x00008800  256 KiB  out     the f32 weight (the commit's destination) [4096 x 4096]
//
// fetch-place-dm places the arguments in order, each at the next 64-byte
// boundary after the previous one (ir.md §2a), and writes the codes' base
// and the block scales' scale_base into the IR; no address is written here.
// `fetchc run` takes and returns the whole tensors.
//
// Read pattern: each row is 64 packets of 64 codes (2 MXFP4 blocks per
// packet).  The exponents are read in the same order, 32 to a packet: the
// Vector Engine takes exponent j for block j of the codes' stream.
//
// Compile:  fetchc mxfp4_dequant_f32.mlir -o mxfp4.bin && fetchc dis mxfp4.bin
//
//   program 0 "dequant_mxfp4/0": main, f4E2M1FN -> f32, base 0x0,
//     [65536 : 1] : 64 (the 16 contiguous rows merge into one entry),
//     table_lookup + type_conversion 3, fetch_size 4, 8 words per packet,
//     flit_count 8.
//   program 1 "dequant_mxfp4/1": sub, f8E8M0FNU -> f8E8M0FNU,
//     base 0x8000, [2048 : 1] : 32, fetch_size 8 (the sub unit's fixed
//     read), 4 words per packet, no stages, flit_count 1: 256 reads on the
//     sub Fetch Unit, beside the codes' 8192 on the main one.  (Before
//     fetch-split-scaling staged scales, it was a main-context program,
//     [2048 : 1] : 2, fetch_size 2: 1024 more reads on the main unit.)

func.func @dequant_mxfp4(%codes: memref<16x4096xf4E2M1FN> {rngd.slice_dim = 0 : i64},
                         %escale: memref<16x128xf8E8M0FNU> {rngd.slice_dim = 0 : i64},
                         %out: memref<16x4096xf32> {rngd.slice_dim = 0 : i64})
    attributes {rngd.slices = 256 : i64} {
  %c = fetch.fetch %codes {map = affine_map<(o, p, e) -> (o, p * 64 + e)>}
      : memref<16x4096xf4E2M1FN> -> !fetch.stream<main, [16, 64], [64], f4E2M1FN>
  %w = fetch.dequant %c, %escale {format = "mxfp4"}
      : !fetch.stream<main, [16, 64], [64], f4E2M1FN>, memref<16x128xf8E8M0FNU>
      -> !fetch.stream<main, [16, 64], [64], f32>
  rngd.commit %w, %out : !fetch.stream<main, [16, 64], [64], f32>, memref<16x4096xf32>
  func.return
}

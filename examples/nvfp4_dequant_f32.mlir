// NVFP4 weight dequantisation to f32
// ==================================
//
// A 4096 x 4096 NVFP4 projection weight (4096 output rows, 4096 input
// columns) decoded to f32, bit for bit as the NVFP4 reference defines it
// (hardware.md §4):
//
//   w[o, i] = (E2M1[code[o, i]] * f32(bscale[o, i / 16])) * gscale
//
// block scale first, tensor scale second, nothing rounded before the final
// f32 product.  fetch.dequant is the whole decode; fetch-split-scaling
// lowers it to
//
//   * the codes' fetch + paired table lookup (e2m1 -> f8E4M3FN, exact)
//     + cast (f8E4M3FN -> f32, exact): program "dequant_nvfp4/0";
//   * a fetch of the block scales, one f8E4M3FN per 16 codes, cast to f32:
//     program "dequant_nvfp4/1", inserted right after the codes' fetch, on
//     the main Fetch Unit in lockstep with the codes (see below);
//   * rngd.block_scale (x * f32(bscale)) and rngd.tensor_scale (* gscale) in
//     the Vector Engine: the scales are never folded into the static table.
//
// The weight does not fit one slice's 512 KiB of DM (hardware.md §1a), so the
// kernel runs on rngd.slices = 256 slices, SPMD (ir.md §2a): each slice holds
// 16 rows of codes, their block scales and their f32 output at the same
// addresses (292 KiB), and runs the same two programs.  rngd.slice_dim = 0
// splits each tensor by rows; the memref types are one slice's part.  One
// slice's DM:
//
//   DM address  size     tensor (one slice's part; whole tensor in brackets)
//   0x00000000  32 KiB   codes   packed codes  memref<16x4096xf4E2M1FN> ((out, in/2)
//                                bytes, even input index in the low nibble)  [4096 x 4096]
//   0x00008000  4 KiB    bscale  block scales  memref<16x256xf8E4M3FN> ((out, in/16))  [4096 x 256]
//   0x00009000  256 KiB  out     the f32 weight (the commit's destination)  [4096 x 4096]
//   (tensor scale: the f32 argument %gscale, not in DM; the same on every slice)
//
// fetch-place-dm places the memref arguments in order, each at the next
// 64-byte boundary after the previous one (ir.md §2a), and writes the codes'
// base and the block scales' scale_base into the IR; no address is written
// here.  `fetchc run` takes the whole weight and returns the whole output.
//
// Read pattern: each row is 64 packets of 64 codes (4 NVFP4 blocks per
// packet); the scale fetch reads the 4 matching block scales per packet.
//
// Why lockstep: fetch-split-scaling stages block scales once through the sub
// Fetch Unit into the VRF when they fit (hardware.md §4a), but a slice's
// 4096 scales take 16 KiB as f32, and one slice's VRF holds 8 KiB.  So the
// compile says, as a remark at the dequant (and in the function's
// rngd.remarks):
//
//   nvfp4_dequant_f32.mlir:80:8: remark: 'fetch.dequant' op fetches its block
//   scales in lockstep with the codes, 1024 reads of 4 bytes on the main
//   Fetch Unit beside the codes' reads, instead of staging them once through
//   the sub Fetch Unit into the VRF: staged (512 reads of 8 bytes on the sub
//   Fetch Unit) they would take 16384 bytes of VRF (!rngd.vrf<[16, 32, 8],
//   f32>), but one slice's VRF holds 8192 bytes
//
// With 8 rows a slice (rngd.slices = 512, the memrefs 8 x ...) the scales
// would take exactly 8 KiB and go through the VRF, as in
// gemma_nvfp4_mlp_decode.mlir and mxfp4_dequant_f32.mlir.
//
// Compile:  fetchc nvfp4_dequant_f32.mlir -o nvfp4.bin && fetchc dis nvfp4.bin
//
//   program 0 "dequant_nvfp4/0": main, f4E2M1FN -> f32, base 0x0,
//     [65536 : 1] : 64 (the 16 contiguous rows merge into one entry), stages
//     table_lookup + type_conversion (table 0 = paired e2m1 -> f8E4M3FN,
//     code 3 = f8E4M3FN -> f32).
//     fetch_size 4 (8 codes): 8 codes cast to 8 x 4 = 32 bytes of f32, one
//     flit, so 16 codes (64 bytes of f32) would not fit; 8 words per packet,
//     flit_count 8 (64 x f32 = 256 bytes).
//   program 1 "dequant_nvfp4/1": main, f8E4M3FN -> f32, base 0x8000,
//     [4096 : 1] : 4, fetch_size 4, type_conversion 3, flit_count 1.

func.func @dequant_nvfp4(%codes: memref<16x4096xf4E2M1FN> {rngd.slice_dim = 0 : i64},
                         %bscale: memref<16x256xf8E4M3FN> {rngd.slice_dim = 0 : i64},
                         %gscale: f32,
                         %out: memref<16x4096xf32> {rngd.slice_dim = 0 : i64})
    attributes {rngd.slices = 256 : i64} {
  %c = fetch.fetch %codes {map = affine_map<(o, p, e) -> (o, p * 64 + e)>}
      : memref<16x4096xf4E2M1FN> -> !fetch.stream<main, [16, 64], [64], f4E2M1FN>
  %w = fetch.dequant %c, %bscale, %gscale {format = "nvfp4"}
      : !fetch.stream<main, [16, 64], [64], f4E2M1FN>, memref<16x256xf8E4M3FN>, f32
      -> !fetch.stream<main, [16, 64], [64], f32>
  rngd.commit %w, %out : !fetch.stream<main, [16, 64], [64], f32>, memref<16x4096xf32>
  func.return
}

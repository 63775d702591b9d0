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
//     program "dequant_nvfp4/1", inserted right after the codes' fetch;
//   * rngd.block_scale (x * f32(bscale)) and rngd.tensor_scale (* gscale) in
//     the Vector Engine: the scales are never folded into the static table.
//
//   DM address  size    tensor
//   0x00000000  8 MiB   codes   packed codes  memref<4096x4096xf4E2M1FN> ((out, in/2)
//                               bytes, even input index in the low nibble)
//   0x00800000  1 MiB   bscale  block scales  memref<4096x256xf8E4M3FN>  ((out, in/16))
//   0x00900000  64 MiB  out     the f32 weight (the commit's destination)
//   (tensor scale: the f32 argument %gscale, not in DM)
//
// fetch-place-dm places the memref arguments in order, each at the next
// 64-byte boundary after the previous one (ir.md §2a), and writes the codes'
// base and the block scales' scale_base into the IR; no address is written
// here.
//
// Read pattern: each row is 64 packets of 64 codes (4 NVFP4 blocks per
// packet); the scale fetch reads the 4 matching block scales per packet.
//
// Compile:  fetchc nvfp4_dequant_f32.mlir -o nvfp4.bin && fetchc dis nvfp4.bin
//
//   program 0 "dequant_nvfp4/0": main, f4E2M1FN -> f32, base 0x0,
//     [4096 : 4096, 4096 : 1] : 64, stages table_lookup + type_conversion
//     (table 0 = paired e2m1 -> f8E4M3FN, code 3 = f8E4M3FN -> f32).
//     fetch_size 4 (8 codes): 8 codes cast to 8 x 4 = 32 bytes of f32, one
//     flit, so 16 codes (64 bytes of f32) would not fit; 8 words per packet,
//     flit_count 8 (64 x f32 = 256 bytes).
//   program 1 "dequant_nvfp4/1": main, f8E4M3FN -> f32, base 0x800000,
//     [4096 : 256, 256 : 1] : 4, fetch_size 4, type_conversion 3, flit_count 1.

func.func @dequant_nvfp4(%codes: memref<4096x4096xf4E2M1FN>,
                         %bscale: memref<4096x256xf8E4M3FN>,
                         %gscale: f32,
                         %out: memref<4096x4096xf32>) {
  %c = fetch.fetch %codes {map = affine_map<(o, p, e) -> (o, p * 64 + e)>}
      : memref<4096x4096xf4E2M1FN> -> !fetch.stream<main, [4096, 64], [64], f4E2M1FN>
  %w = fetch.dequant %c, %bscale, %gscale {format = "nvfp4"}
      : !fetch.stream<main, [4096, 64], [64], f4E2M1FN>, memref<4096x256xf8E4M3FN>, f32
      -> !fetch.stream<main, [4096, 64], [64], f32>
  rngd.commit %w, %out : !fetch.stream<main, [4096, 64], [64], f32>, memref<4096x4096xf32>
  func.return
}

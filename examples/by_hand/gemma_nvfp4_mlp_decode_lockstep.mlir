// Gemma-style NVFP4 MLP weight decode, written by hand: the lockstep form
// ======================================================================
//
// The decode of gemma_nvfp4_mlp_decode.mlir (four rows of 3840 NVFP4 codes
// per slice, 256 slices, a bf16 result), with no fetch.dequant: the split as
// fetch-split-scaling wrote it before it staged scales in the VRF, and as it
// still writes it when the scales do not fit the VRF (hardware.md §4a).  The
// block scales are fetched on the main Fetch Unit in lockstep with the codes,
// one scale per 16-code block, in the codes' time order:
//
//   * program "gemma_mlp_lockstep/0": the codes, [4, 120], [32], lookup
//     e2m1 -> f8E4M3FN + cast to f32, 1920 reads of 4 bytes;
//   * program "gemma_mlp_lockstep/1": the scales, [4, 120], [2] with map
//     (o, p, e) -> (o, p * 2 + e), cast f8E4M3FN -> f32, 480 reads of 2
//     bytes, on the main unit too;
//   * rngd.block_scale with the lockstep stream, rngd.tensor_scale, and the
//     Cast Engine's rngd.cast to bf16.
//
// Both programs run on the main Fetch Unit, one after the other: 1920 + 480
// = 2400 cycles per slice (hardware.md §6).  The bits are those of the
// staged form and of fetch.dequant (hardware.md §4: the same products).

func.func @gemma_mlp_lockstep(%codes: memref<4x3840xf4E2M1FN> {rngd.slice_dim = 0 : i64},
                              %bscale: memref<4x240xf8E4M3FN> {rngd.slice_dim = 0 : i64},
                              %gscale: f32,
                              %w: memref<4x3840xbf16> {rngd.slice_dim = 0 : i64})
    attributes {rngd.slices = 256 : i64} {
  %c = fetch.fetch %codes {map = affine_map<(o, p, e) -> (o, p * 32 + e)>}
      : memref<4x3840xf4E2M1FN> -> !fetch.stream<main, [4, 120], [32], f4E2M1FN>
  %s = fetch.fetch %bscale {map = affine_map<(o, p, e) -> (o, p * 2 + e)>}
      : memref<4x240xf8E4M3FN> -> !fetch.stream<main, [4, 120], [2], f8E4M3FN>
  %sf = fetch.cast %s : !fetch.stream<main, [4, 120], [2], f8E4M3FN> -> !fetch.stream<main, [4, 120], [2], f32>
  %l = fetch.table_lookup %c : !fetch.stream<main, [4, 120], [32], f4E2M1FN> -> !fetch.stream<main, [4, 120], [32], f8E4M3FN>
  %f = fetch.cast %l : !fetch.stream<main, [4, 120], [32], f8E4M3FN> -> !fetch.stream<main, [4, 120], [32], f32>
  %b = rngd.block_scale %f, %sf {block = 16 : i64}
      : !fetch.stream<main, [4, 120], [32], f32>, !fetch.stream<main, [4, 120], [2], f32> -> !fetch.stream<main, [4, 120], [32], f32>
  %t = rngd.tensor_scale %b, %gscale : !fetch.stream<main, [4, 120], [32], f32>, f32 -> !fetch.stream<main, [4, 120], [32], f32>
  %n = rngd.cast %t : !fetch.stream<main, [4, 120], [32], f32> -> !fetch.stream<main, [4, 120], [32], bf16>
  rngd.commit %n, %w : !fetch.stream<main, [4, 120], [32], bf16>, memref<4x3840xbf16>
  func.return
}

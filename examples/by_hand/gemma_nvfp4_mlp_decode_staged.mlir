// Gemma-style NVFP4 MLP weight decode, written by hand: the staged form
// ===================================================================
//
// The decode of gemma_nvfp4_mlp_decode.mlir (four rows of 3840 NVFP4 codes
// per slice, 256 slices, a bf16 result), with no fetch.dequant, the way the
// hand-written RNGD kernels for the Gemma-4 12B MLP do it (hardware.md §4a):
//
//   * the 960 block scales of a slice staged once on the sub Fetch Unit:
//     [4, 30], [8] (8 scales = one 8-byte sub read, 8 f32 = one flit), the
//     adapter's cast f8E4M3FN -> f32, rngd.collect, rngd.to_vrf into a VRF
//     tensor of 960 f32 (3840 bytes of the slice's 8 KiB): program
//     "gemma_mlp_staged/0", 120 reads on the sub unit;
//   * the codes on the main Fetch Unit, [4, 120], [32], lookup + cast to
//     f32: program "gemma_mlp_staged/1", 1920 reads;
//   * rngd.block_scale reading the VRF (scale j for block j of 16 codes of
//     the codes' stream, in stream order), rngd.tensor_scale, and the Cast
//     Engine's rngd.cast to bf16, committed to DM (a real kernel would feed
//     rngd.to_trf for a bf16 contraction).
//
// The two units run alongside each other: the kernel costs max(1920, 120) =
// 1920 cycles per slice (hardware.md §6), what fetch-split-scaling makes of
// the fetch.dequant.  The bits are the same (hardware.md §4).

func.func @gemma_mlp_staged(%codes: memref<4x3840xf4E2M1FN> {rngd.slice_dim = 0 : i64},
                            %bscale: memref<4x240xf8E4M3FN> {rngd.slice_dim = 0 : i64},
                            %gscale: f32,
                            %w: memref<4x3840xbf16> {rngd.slice_dim = 0 : i64})
    attributes {rngd.slices = 256 : i64} {
  %s = fetch.fetch %bscale {map = affine_map<(o, t, e) -> (o, t * 8 + e)>}
      : memref<4x240xf8E4M3FN> -> !fetch.stream<sub, [4, 30], [8], f8E4M3FN>
  %sf = fetch.cast %s : !fetch.stream<sub, [4, 30], [8], f8E4M3FN> -> !fetch.stream<sub, [4, 30], [8], f32>
  %sk = rngd.collect %sf : !fetch.stream<sub, [4, 30], [8], f32> -> !fetch.stream<sub, [4, 30], [8], f32>
  %sv = rngd.to_vrf %sk : !fetch.stream<sub, [4, 30], [8], f32> -> !rngd.vrf<[4, 30, 8], f32>
  %c = fetch.fetch %codes {map = affine_map<(o, p, e) -> (o, p * 32 + e)>}
      : memref<4x3840xf4E2M1FN> -> !fetch.stream<main, [4, 120], [32], f4E2M1FN>
  %l = fetch.table_lookup %c : !fetch.stream<main, [4, 120], [32], f4E2M1FN> -> !fetch.stream<main, [4, 120], [32], f8E4M3FN>
  %f = fetch.cast %l : !fetch.stream<main, [4, 120], [32], f8E4M3FN> -> !fetch.stream<main, [4, 120], [32], f32>
  %b = rngd.block_scale %f, %sv {block = 16 : i64}
      : !fetch.stream<main, [4, 120], [32], f32>, !rngd.vrf<[4, 30, 8], f32> -> !fetch.stream<main, [4, 120], [32], f32>
  %t = rngd.tensor_scale %b, %gscale : !fetch.stream<main, [4, 120], [32], f32>, f32 -> !fetch.stream<main, [4, 120], [32], f32>
  %n = rngd.cast %t : !fetch.stream<main, [4, 120], [32], f32> -> !fetch.stream<main, [4, 120], [32], bf16>
  rngd.commit %n, %w : !fetch.stream<main, [4, 120], [32], bf16>, memref<4x3840xbf16>
  func.return
}

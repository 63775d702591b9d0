// Gemma-style NVFP4 MLP weight decode, as the best RNGD kernels split it
// =====================================================================
//
// An NVFP4 MLP weight of a 12B Gemma model (hidden size H = 3840): 1024 rows
// of 3840 input columns, on 256 slices, four rows per slice, as hand-written
// RNGD kernels decode it (hardware.md §4a).  Each slice holds its four rows:
//
//   w[o, i] = bf16((E2M1[code[o, i]] * f32(bscale[o, i / 16])) * gscale)
//
// block scale first, tensor scale second, in f32 with RNGD's rules
// (hardware.md §2.2a), then narrowed to bf16 by the Cast Engine (round to
// nearest even, a subnormal becomes a zero of its sign, NaN 0x7FC0).  The
// fetch.dequant asks for a bf16 result; fetch-split-scaling lowers it to
//
//   * the codes on the main Fetch Unit, at full 32-byte output reads: the
//     paired lookup e2m1 -> f8E4M3FN and the cast to f32 (both exact),
//     read as [4, 120], [32] (32 codes, 2 blocks, a packet): program
//     "gemma_mlp_decode/0";
//   * the block scales staged ONCE through the sub Fetch Unit into the VRF:
//     the lockstep scale stream would be [4, 120], [2] with map
//     (o, p, e) -> (o, p * 2 + e), 480 main reads of 2 bytes; the same 960
//     scales are read as [4, 30], [8], map (o, t, e) -> (o, t * 8 + e): 120
//     sub reads of 8 bytes, cast f8E4M3FN -> f32 (8 f32 = one flit),
//     rngd.collect, rngd.to_vrf into !rngd.vrf<[4, 30, 8], f32> (3840 bytes
//     of the slice's 8 KiB VRF): program "gemma_mlp_decode/1";
//   * the Vector Engine: rngd.block_scale reading scale j of the VRF for
//     block j of the codes' stream, rngd.tensor_scale by gscale;
//   * the Cast Engine: rngd.cast f32 -> bf16.
//
// A real kernel would feed the bf16 stream to rngd.to_trf for a bf16
// contraction (hardware.md §2.6); here it is committed to DM, so that
// `fetchc run` can compute it (the Contraction Engine's arithmetic is not
// part of the golden model).
//
// DM of one slice (fetch-place-dm, in argument order, 64-byte aligned):
//
//   DM address  size      tensor (one slice's part; whole tensor in brackets)
//   0x00000000  7680 B    codes   packed codes memref<4x3840xf4E2M1FN>  [1024 x 3840]
//   0x00001e00  960 B     bscale  block scales memref<4x240xf8E4M3FN>   [1024 x 240]
//   0x000021c0  30 KiB    w       the bf16 weight memref<4x3840xbf16>   [1024 x 3840]
//   (tensor scale: the f32 argument %gscale, the same on every slice)
//
// Cost (hardware.md §6, per slice): the codes program 480 packets x 4 reads
// = 1920 reads (and 1920 flits) on the main unit; the staged scales 120 sub
// reads beside them.  The kernel: max(1920, 120) = 1920 cycles, against
// 2400 when the scales were fetched in lockstep on the main unit (480 reads
// more).  by_hand/gemma_nvfp4_mlp_decode_lockstep.mlir and
// by_hand/gemma_nvfp4_mlp_decode_staged.mlir write the same decode by hand
// in the two forms; tools/bench_split.py compares the three.
//
// Compile:  fetchc gemma_nvfp4_mlp_decode.mlir -o gemma.bin && fetchc dis gemma.bin
//
//   program 0 "gemma_mlp_decode/0": main, f4E2M1FN -> f32, base 0x0,
//     [15360 : 1] : 32, fetch_size 4 (8 codes cast to 32 bytes of f32),
//     table_lookup + type_conversion 3, flit_count 4, words_per_packet 4.
//   program 1 "gemma_mlp_decode/1": sub, f8E4M3FN -> f32, base 0x1e00,
//     [960 : 1] : 8, fetch_size 8, type_conversion 3, flit_count 1,
//     words_per_packet 1.

func.func @gemma_mlp_decode(%codes: memref<4x3840xf4E2M1FN> {rngd.slice_dim = 0 : i64},
                            %bscale: memref<4x240xf8E4M3FN> {rngd.slice_dim = 0 : i64},
                            %gscale: f32,
                            %w: memref<4x3840xbf16> {rngd.slice_dim = 0 : i64})
    attributes {rngd.slices = 256 : i64} {
  %c = fetch.fetch %codes {map = affine_map<(o, p, e) -> (o, p * 32 + e)>}
      : memref<4x3840xf4E2M1FN> -> !fetch.stream<main, [4, 120], [32], f4E2M1FN>
  %d = fetch.dequant %c, %bscale, %gscale {format = "nvfp4"}
      : !fetch.stream<main, [4, 120], [32], f4E2M1FN>, memref<4x240xf8E4M3FN>, f32
      -> !fetch.stream<main, [4, 120], [32], bf16>
  rngd.commit %d, %w : !fetch.stream<main, [4, 120], [32], bf16>, memref<4x3840xbf16>
  func.return
}

// int8 GEMM with an asymmetric (zero-pointed) activation
// ======================================================
//
// An int8 matmul tile out[64 x 128] = (x - zx) . W: x is an asymmetric int8
// activation (zero point zx = -3), W a symmetric int8 weight.
//
//   1. sub Fetch Unit (StoTrf): stage the weight tile into the TRF with a
//      plain fetch (no adapter stage, 8-byte reads).
//   2. main Fetch Unit: read the activations and subtract the zero point in
//      the Fetch Adapter (fetch.zp_sub), which widens i8 -> i9 so every
//      residual x - zx in [-255, 255] is exact (hardware.md §2.3).  An i9
//      stream can only reach the Contraction Engine: it passes the Switch
//      and Collect Engines and feeds rngd.contract_outer, whose i32
//      accumulator stream is committed to DM.  (Committing, storing to a
//      register file or transposing the i9 stream is a compile-time error.)
//
//   DM address  size    tensor
//   0x00000000  32 KiB  w    weight tile   memref<128x256xi8>
//   0x00008000  16 KiB  x    activations   memref<64x256xi8>
//   0x0000c000  64 KiB  acc  accumulator   memref<64x256xi32> (the commit's destination)
//
// fetch-place-dm places the arguments in order, each at the next 64-byte
// boundary after the previous one (ir.md §2a); no address is written here.
//
// Compile:  fetchc int8_zero_point_contract.mlir -o gemm.bin && fetchc dis gemm.bin
//
//   program 0 "gemm_i8/0": sub, i8 -> i8, base 0x0, [32768 : 1] : 32,
//     fetch_size 8, 4 words per packet, no stages, flit_count 1.
//   program 1 "gemm_i8/1": main, i8 -> i9, base 0x8000, [16384 : 1] : 32,
//     fetch_size 32, stages zero_point, zero point -3 (i8 -> i9),
//     flit_count 2 (i9 counts 2 bytes: 32 x 2 = 64 bytes).
//   No tables.

func.func @gemm_i8(%w: memref<128x256xi8>, %x: memref<64x256xi8>,
                   %acc: memref<64x256xi32>) {
  // 1. weights -> TRF (sub context).
  %ws = fetch.fetch %w {map = affine_map<(n, p, e) -> (n, p * 32 + e)>}
      : memref<128x256xi8> -> !fetch.stream<sub, [128, 8], [32], i8>
  %wt = rngd.to_trf %ws : !fetch.stream<sub, [128, 8], [32], i8> -> !rngd.trf<i8>

  // 2. activations - zero point -> contraction (main context).
  %xs = fetch.fetch %x {map = affine_map<(m, p, e) -> (m, p * 32 + e)>}
      : memref<64x256xi8> -> !fetch.stream<main, [64, 8], [32], i8>
  %xz = fetch.zp_sub %xs, -3 : !fetch.stream<main, [64, 8], [32], i8> -> !fetch.stream<main, [64, 8], [32], i9>
  %sw = rngd.switch %xz : !fetch.stream<main, [64, 8], [32], i9> -> !fetch.stream<main, [64, 8], [32], i9>
  %co = rngd.collect %sw : !fetch.stream<main, [64, 8], [32], i9> -> !fetch.stream<main, [64, 8], [32], i9>
  %y = rngd.contract_outer %co, %wt
      : !fetch.stream<main, [64, 8], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64, 8], [32], i32>
  rngd.commit %y, %acc : !fetch.stream<main, [64, 8], [32], i32>, memref<64x256xi32>
  func.return
}

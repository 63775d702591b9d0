// NVFP4 weight decode, then StoTrf staging into the TRF
// ====================================================
//
// The decode-then-stage GEMM path of hardware.md §2.1: the sub Fetch Unit,
// which StoTrf uses to stage weights into the tensor register file, has no
// table-lookup register, so it cannot decode e2m1 codes itself.  Instead:
//
//   1. main Fetch Unit: read the packed NVFP4 codes, decode them through the
//      paired e2m1 -> f8E4M3FN table (one byte key = two codes), and commit
//      the f8E4M3FN tile to DM;
//   2. sub Fetch Unit: a plain convert-only StoTrf fetch (no adapter stage)
//      reads that committed f8E4M3FN tile back from its DM address, 8 bytes
//      per read, and stages it into the TRF.
//
// The NVFP4 block scales (f8E4M3FN, one per 16 codes) and the f32 tensor
// scale are not folded into the table; the Contraction Engine applies them
// to the accumulator downstream (not shown here).
//
// The tile: 256 output rows x 512 input columns of one projection weight.
//
//   DM address  size     tensor
//   0x00000000  64 KiB   codes  packed codes    memref<256x512xf4E2M1FN> (2 codes/byte,
//                               even input index in the low nibble)
//   0x00010000  128 KiB  w8     decoded weight  memref<256x512xf8E4M3FN> (written by
//                               step 1, read by step 2)
//
// fetch-place-dm places the arguments in order, each at the next 64-byte
// boundary after the previous one (ir.md §2a).  %w8 is one argument, so the
// commit of step 1 and the fetch of step 2 use its one address.
//
// Compile:  fetchc nvfp4_weight_decode_stotrf.mlir -o w.bin && fetchc dis w.bin
//
//   program 0 "stage_weight/0": main, f4E2M1FN -> f8E4M3FN, base 0x0,
//     [256 : 512, 512 : 1] : 32 (each row's 16 packets merge into one entry),
//     fetch_size 16 (32 codes), stages table_lookup, table 0, flit_count 1.
//   program 1 "stage_weight/1": sub, f8E4M3FN -> f8E4M3FN, base 0x10000,
//     [256 : 512, 512 : 1] : 32, fetch_size 8 (fixed on sub), 4 words per
//     packet, no stages, flit_count 1.

func.func @stage_weight(%codes: memref<256x512xf4E2M1FN>,
                        %w8: memref<256x512xf8E4M3FN>) -> !rngd.trf<f8E4M3FN> {
  // Step 1 (main): 256 rows x 16 packets of 32 codes; packet p of row r reads
  // input columns 32*p .. 32*p+31.
  %c = fetch.fetch %codes {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<256x512xf4E2M1FN> -> !fetch.stream<main, [256, 16], [32], f4E2M1FN>
  // The paired table decode (fetch.convert legalises to fetch.table_lookup).
  %d = fetch.convert %c
      : !fetch.stream<main, [256, 16], [32], f4E2M1FN> -> !fetch.stream<main, [256, 16], [32], f8E4M3FN>
  rngd.commit %d, %w8 : !fetch.stream<main, [256, 16], [32], f8E4M3FN>, memref<256x512xf8E4M3FN>

  // Step 2 (sub, StoTrf): read the committed tensor at its DM address, no
  // adapter stage, 8-byte reads, and stage it into the TRF.
  %s = fetch.fetch %w8 {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<256x512xf8E4M3FN> -> !fetch.stream<sub, [256, 16], [32], f8E4M3FN>
  %t = rngd.to_trf %s : !fetch.stream<sub, [256, 16], [32], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// ir.md §3 rule 2: fetch.table_lookup on a `sub` stream is an error that says
// the sub Fetch Unit has no table register and gives the route: decode on
// main -> commit to DM -> convert-only StoTrf on sub.  For an f4E2M1FN stream
// it also names fetch.convert, which fetch-route-sub-decode routes that way
// automatically.  fetch.dequant on sub is no verifier error: the pass routes
// it (fetch-split-scaling reports it when the pass did not run).
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid: the route itself.  Decode on main, commit the f8E4M3FN to DM, stage
// it into the TRF with a plain sub-context fetch.
func.func @decode_then_stotrf(%w: memref<64x16xf4E2M1FN>, %dm: memref<64x16xf8E4M3FN>) -> !rngd.trf<f8E4M3FN> {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.table_lookup %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  rngd.commit %d, %dm : !fetch.stream<main, [64], [16], f8E4M3FN>, memref<64x16xf8E4M3FN>
  %k = fetch.fetch %dm : memref<64x16xf8E4M3FN> -> !fetch.stream<sub, [64], [16], f8E4M3FN>
  %t = rngd.to_trf %k : !fetch.stream<sub, [64], [16], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// -----

// Valid: a sub-context stream may still cast.
func.func @sub_cast(%a: memref<64x8xbf16>) -> !rngd.vrf<[64, 8], f32> {
  %s = fetch.fetch %a : memref<64x8xbf16> -> !fetch.stream<sub, [64], [8], bf16>
  %c = fetch.cast %s : !fetch.stream<sub, [64], [8], bf16> -> !fetch.stream<sub, [64], [8], f32>
  %v = rngd.to_vrf %c : !fetch.stream<sub, [64], [8], f32> -> !rngd.vrf<[64, 8], f32>
  func.return %v : !rngd.vrf<[64, 8], f32>
}

// -----

func.func @lookup_on_sub(%w: memref<64x16xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.table_lookup' op runs on the sub Fetch Unit, which has no table-lookup register (only the main context's mode_indirect_table can point at a table); decode on the main context, commit the decoded stream to DM with rngd.commit, then stage it with a plain convert-only StoTrf fetch on the sub context; or write fetch.convert instead, which fetchc routes this way automatically (fetch-route-sub-decode, in the default pipeline)}}
  %d = fetch.table_lookup %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f8E4M3FN>
  %t = rngd.to_trf %d : !fetch.stream<sub, [64], [16], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// -----

// The non-paired f8 -> bf16 table is just as unavailable on sub.
func.func @bf16_lookup_on_sub(%a: memref<64x8xf8E5M2>) -> !rngd.trf<bf16> {
  %s = fetch.fetch %a : memref<64x8xf8E5M2> -> !fetch.stream<sub, [64], [8], f8E5M2>
  // expected-error @+1 {{'fetch.table_lookup' op runs on the sub Fetch Unit, which has no table-lookup register}}
  %d = fetch.table_lookup %s : !fetch.stream<sub, [64], [8], f8E5M2> -> !fetch.stream<sub, [64], [8], bf16>
  %t = rngd.to_trf %d : !fetch.stream<sub, [64], [8], bf16> -> !rngd.trf<bf16>
  func.return %t : !rngd.trf<bf16>
}

// -----

// The non-paired table has no automatic route (fetch.convert does not route
// f8 -> bf16): the message stops at the route by hand.
func.func @bf16_lookup_on_sub_no_convert_hint(%a: memref<64x8xf8E4M3FN>) -> !rngd.trf<bf16> {
  %s = fetch.fetch %a : memref<64x8xf8E4M3FN> -> !fetch.stream<sub, [64], [8], f8E4M3FN>
  // expected-error-re @+1 {{'fetch.table_lookup' op runs on the sub Fetch Unit, {{.*}} then stage it with a plain convert-only StoTrf fetch on the sub context{{$}}}}
  %d = fetch.table_lookup %s : !fetch.stream<sub, [64], [8], f8E4M3FN> -> !fetch.stream<sub, [64], [8], bf16>
  %t = rngd.to_trf %d : !fetch.stream<sub, [64], [8], bf16> -> !rngd.trf<bf16>
  func.return %t : !rngd.trf<bf16>
}

// -----

// Valid: fetch.dequant on sub verifies (fetch-route-sub-decode routes it).
func.func @dequant_on_sub(%w: memref<64x16xf4E2M1FN>, %bs: memref<64x1xf8E4M3FN>, %g: f32, %o: memref<64x16xf32>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<sub, [64], [16], f4E2M1FN>, memref<64x1xf8E4M3FN>, f32 -> !fetch.stream<sub, [64], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// A packed f4E2M1FN decode on the sub context is legal input: the default
// pipeline routes it (fetch-route-sub-decode).  A pipeline without that pass
// reports it at the request, naming the automatic route.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p fetch-legalize-convert,fetch-split-scaling
// RUN: not %fetchc %s --split-input-file -p fetch-legalize-convert,fetch-split-scaling --emit=mlir 2>&1 | FileCheck %s
// The default pipeline compiles every case.
// RUN: %fetchc %s --split-input-file --emit=seq | FileCheck %s --check-prefix=ROUTED

// CHECK: route-sub-decode-not-run.mlir:[[# @LINE + 6]]:8: error: 'fetch.convert' op needs a table lookup for f4E2M1FN -> f8E4M3FN, but the stream is on the sub Fetch Unit, which has no table-lookup register; the automatic route (fetch-route-sub-decode, first in the default pipeline) decodes on the main context into a DM scratch buffer and stages it on the sub context: run it before fetch-legalize-convert, or write the route by hand (decode on main, rngd.commit to DM, then a convert-only StoTrf fetch on sub)
// ROUTED-LABEL: fetch_seq.program %w {program_name = "to_f8/0", unit = #fetch_seq.unit<main>
// ROUTED: fetch_seq.program %scratch0 {program_name = "to_f8/1", unit = #fetch_seq.unit<sub>
func.func @to_f8(%w: memref<64x16xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  // expected-error @+1 {{'fetch.convert' op needs a table lookup for f4E2M1FN -> f8E4M3FN, but the stream is on the sub Fetch Unit, which has no table-lookup register; the automatic route (fetch-route-sub-decode, first in the default pipeline) decodes on the main context into a DM scratch buffer and stages it on the sub context: run it before fetch-legalize-convert, or write the route by hand (decode on main, rngd.commit to DM, then a convert-only StoTrf fetch on sub)}}
  %d = fetch.convert %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f8E4M3FN>
  %t = rngd.to_trf %d : !fetch.stream<sub, [64], [16], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// -----

// CHECK: route-sub-decode-not-run.mlir:[[# @LINE + 6]]:8: error: 'fetch.convert' op needs a table lookup for f4E2M1FN -> f32, {{.*}} the automatic route (fetch-route-sub-decode, first in the default pipeline)
// ROUTED-LABEL: program_name = "to_f32/0", unit = #fetch_seq.unit<main>
// ROUTED: program_name = "to_f32/1", unit = #fetch_seq.unit<sub>, {{.*}}type_conversion = #fetch_seq.cast<f8E4M3FN_to_f32>
func.func @to_f32(%w: memref<64x16xf4E2M1FN>, %o: memref<64x16xf32>) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  // expected-error @+1 {{the automatic route (fetch-route-sub-decode, first in the default pipeline) decodes on the main context into a DM scratch buffer}}
  %d = fetch.convert %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// -----

// CHECK: route-sub-decode-not-run.mlir:[[# @LINE + 8]]:8: error: 'fetch.dequant' op decodes through a table, which the sub Fetch Unit does not have: the automatic route (fetch-route-sub-decode, first in the default pipeline) decodes on the main context into a DM scratch buffer and stages it on the sub context; run it before fetch-split-scaling, or write the route by hand (decode on main, rngd.commit to DM, then a convert-only StoTrf on sub)
// CHECK: route-sub-decode-not-run.mlir:[[# @LINE + 5]]:8: note: the codes are fetched on the sub context here
// ROUTED-LABEL: program_name = "dq/0", unit = #fetch_seq.unit<main>
// ROUTED: program_name = "dq/1", unit = #fetch_seq.unit<sub>
// ROUTED: program_name = "dq/2", unit = #fetch_seq.unit<sub>
func.func @dq(%w: memref<64x128xf4E2M1FN>, %bs: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %s = fetch.fetch %w : memref<64x128xf4E2M1FN> -> !fetch.stream<sub, [64], [128], f4E2M1FN> // expected-note {{the codes are fetched on the sub context here}}
  // expected-error @+1 {{'fetch.dequant' op decodes through a table, which the sub Fetch Unit does not have: the automatic route (fetch-route-sub-decode, first in the default pipeline) decodes on the main context into a DM scratch buffer and stages it on the sub context; run it before fetch-split-scaling, or write the route by hand (decode on main, rngd.commit to DM, then a convert-only StoTrf on sub)}}
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<sub, [64], [128], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<sub, [64], [128], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64], [128], f32>, memref<64x128xf32>
  func.return
}

// --emit=bin after a -p pipeline that does not reach fetch_seq is an error
// at the first op still in the fetch dialect; no output file is written.  The
// hint names the passes that lower what is left, never one that already ran.
// RUN: rm -f %t.bin
// RUN: not %fetchc %s -p fetch-legalize-convert -o %t.bin 2>&1 | FileCheck %s
// RUN: not test -e %t.bin
// RUN: not %fetchc %s -p '' -o %t.bin 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not %fetchc %s -p fetch-place-dm -o %t.bin 2>&1 | FileCheck %s --check-prefix=PLACED
// The same input compiles with the default pipeline.
// RUN: %fetchc %s -o %t.bin && test -s %t.bin

// NONE: error: 'fetch.fetch' op is still present: --emit=bin needs the pipeline to reach fetch_seq (run fetch-place-dm, then fetch-legalize-convert, then fetch-to-seq; without -p the default pipeline runs every pass)
// PLACED: error: 'fetch.fetch' op is still present: --emit=bin needs the pipeline to reach fetch_seq (run fetch-legalize-convert, then fetch-to-seq; without -p the default pipeline runs every pass)
// CHECK: emit-bin-unlowered.mlir:[[# @LINE + 2]]:8: error: 'fetch.fetch' op is still present: --emit=bin needs the pipeline to reach fetch_seq (run fetch-place-dm, then fetch-to-seq; without -p the default pipeline runs every pass)
func.func @convert(%b: memref<64xf8E4M3FN>, %o: memref<64xbf16>) {
  %s = fetch.fetch %b {map = affine_map<(t, p) -> (t * 32 + p)>} : memref<64xf8E4M3FN> -> !fetch.stream<main, [2], [32], f8E4M3FN>
  %c = fetch.convert %s : !fetch.stream<main, [2], [32], f8E4M3FN> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %c, %o : !fetch.stream<main, [2], [32], bf16>, memref<64xbf16>
  func.return
}

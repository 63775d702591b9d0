// --split-input-file, --print-op-generic, --print-ir-after-all.
//
// Outputs of the chunks are separated by `// -----`, as in mlir-opt.
// RUN: %fetchc --split-input-file -p '' --emit=mlir %s | FileCheck %s --check-prefix=SPLIT
// SPLIT: builtin.module {
// SPLIT-NEXT: func.func @first
// SPLIT: {{^}}}{{$}}
// SPLIT-NEXT: // -----
// SPLIT-NEXT: builtin.module {
// SPLIT-NEXT: func.func @second
// SPLIT-NOT: // -----
//
// Without the flag the markers are comments: one module holds both functions.
// RUN: %fetchc -p '' --emit=mlir %s | FileCheck %s --check-prefix=WHOLE
// WHOLE: builtin.module {
// WHOLE: func.func @first
// WHOLE-NOT: builtin.module
// WHOLE: func.func @second
//
// One seq.bin per input: --emit=bin with several chunks is an error.
// RUN: not %fetchc --split-input-file %s -o %t.bin 2>&1 | FileCheck %s --check-prefix=SPLITBIN
// RUN: not test -e %t.bin
// SPLITBIN: error: --emit=bin makes one seq.bin per input: with --split-input-file use --emit=mlir or --emit=seq
//
// Errors of every chunk are reported, with the original file's line numbers.
// RUN: not %fetchc --split-input-file -p '' --emit=mlir %S/Inputs/verify_split.mlir 2>&1 | FileCheck %s --check-prefix=SPLITERR
// SPLITERR: verify_split.mlir:4:8: error: 'fetch.fetch' op its result stream is never used
// SPLITERR: verify_split.mlir:10:8: error: 'fetch.fetch' op its result stream is never used
//
// --print-op-generic prints every op generically, after the pipeline.
// RUN: %fetchc --split-input-file --emit=mlir --print-op-generic %s | FileCheck %s --check-prefix=GENERIC
// GENERIC: "builtin.module"() ({
// GENERIC: "fetch.fetch"(%w) <{base = 4096 : i64}> : (memref<64x16xf4E2M1FN>) -> !fetch.stream<main, [64], [16], f4E2M1FN>
// GENERIC-NEXT: "fetch.table_lookup"
// GENERIC: "rngd.commit"
// GENERIC: // -----
// GENERIC: "fetch.fetch"(%a)
//
// --print-ir-after-all dumps the IR to stderr after every pass, like mlir-opt;
// stdout still gets the result.
// RUN: %fetchc --split-input-file --emit=mlir --print-ir-after-all %s 2>%t.dump | FileCheck %s --check-prefix=SPLIT
// RUN: FileCheck %s --check-prefix=DUMP < %t.dump
// DUMP: // -----// IR Dump After fetch-legalize-convert //----- //
// DUMP-NEXT: builtin.module {
// DUMP: fetch.table_lookup
// DUMP: // -----// IR Dump After fetch-split-scaling //----- //
// DUMP-NEXT: builtin.module {
// DUMP-NOT: IR Dump After fetch-to-seq
// DUMP: // -----// IR Dump After fetch-legalize-convert //----- //
// DUMP: func.func @second
// DUMP: // -----// IR Dump After fetch-split-scaling //----- //
//
// RUN: %fetchc -p 'fetch-legalize-convert,dce' --emit=mlir --print-ir-after-all --print-op-generic %s 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMPGEN
// DUMPGEN: // -----// IR Dump After fetch-legalize-convert //----- //
// DUMPGEN-NEXT: "builtin.module"() ({
// DUMPGEN: // -----// IR Dump After dce //----- //
// DUMPGEN-NEXT: "builtin.module"() ({

func.func @first(%w: memref<64x16xf4E2M1FN>, %out: memref<64x16xf8E4M3FN>) {
  %s = fetch.fetch %w {base = 4096 : i64} : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E4M3FN>
  rngd.commit %d, %out : !fetch.stream<main, [64], [16], f8E4M3FN>, memref<64x16xf8E4M3FN>
  func.return
}

// -----

func.func @second(%a: memref<64x16xi8>, %o: memref<64x16xi8>) {
  %s = fetch.fetch %a : memref<64x16xi8> -> !fetch.stream<main, [64], [16], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], i8>, memref<64x16xi8>
  func.return
}

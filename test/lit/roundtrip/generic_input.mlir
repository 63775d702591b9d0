// The generic form is accepted always (ir.md §2): an input written entirely in
// generic form parses, verifies and prints in the custom form; printing it
// generic again gives back the same IR.
//
// RUN: %fetchc -p '' --emit=mlir %s | FileCheck %s
// RUN: %fetchc -p '' --emit=mlir --print-op-generic %s | %fetchc -p '' --emit=mlir | FileCheck %s

// CHECK-LABEL: func.func @generic(
// CHECK-NEXT: %s = fetch.fetch %buf {base = 393216 : i64, map = affine_map<(d0, d1) -> (d0, d1)>} : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
// CHECK-NEXT: %d = fetch.table_lookup %s : !fetch.stream<main, [4096], [16], f4E2M1FN> -> !fetch.stream<main, [4096], [16], f8E4M3FN>
// CHECK-NEXT: %f = fetch.cast %d : !fetch.stream<main, [4096], [16], f8E4M3FN> -> !fetch.stream<main, [4096], [16], f32>
// CHECK-NEXT: %sw = rngd.switch %f : !fetch.stream<main, [4096], [16], f32> -> !fetch.stream<main, [4096], [16], f32>
// CHECK-NEXT: rngd.commit %sw, %out : !fetch.stream<main, [4096], [16], f32>, memref<4096x16xf32>
// CHECK-NEXT: %q = fetch.fetch %x {base = 64 : i64, read_size = 16 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
// CHECK-NEXT: %r = fetch.zp_sub %q, 3 : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i9>
// CHECK-NEXT: %acc = rngd.contract_outer %r, %trf : !fetch.stream<main, [64], [32], i9>, !rngd.trf<i8> -> !fetch.stream<main, [64], [32], i32>
// CHECK-NEXT: rngd.commit %acc, %o : !fetch.stream<main, [64], [32], i32>, memref<64x32xi32>
// CHECK-NEXT: %a = fetch.fetch %y : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
// CHECK-NEXT: %b = fetch.convert %a : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [64], [16], bf16>
// CHECK-NEXT: %t = rngd.to_trf %b : !fetch.stream<main, [64], [16], bf16> -> !rngd.trf<bf16>
// CHECK-NEXT: func.return %t : !rngd.trf<bf16>
"func.func"() <{sym_name = "generic", function_type = (memref<4096x16xf4E2M1FN>, memref<4096x16xf32>, memref<64x32xi8>, !rngd.trf<i8>, memref<64x32xi32>, memref<64x16xf8E5M2>) -> !rngd.trf<bf16>}> ({
^bb0(%buf: memref<4096x16xf4E2M1FN>, %out: memref<4096x16xf32>, %x: memref<64x32xi8>, %trf: !rngd.trf<i8>, %o: memref<64x32xi32>, %y: memref<64x16xf8E5M2>):
  %s = "fetch.fetch"(%buf) <{base = 393216 : i64, map = affine_map<(t0, p0) -> (t0, p0)>}> : (memref<4096x16xf4E2M1FN>) -> !fetch.stream<main, [4096], [16], f4E2M1FN>
  %d = "fetch.table_lookup"(%s) : (!fetch.stream<main, [4096], [16], f4E2M1FN>) -> !fetch.stream<main, [4096], [16], f8E4M3FN>
  %f = "fetch.cast"(%d) : (!fetch.stream<main, [4096], [16], f8E4M3FN>) -> !fetch.stream<main, [4096], [16], f32>
  %sw = "rngd.switch"(%f) : (!fetch.stream<main, [4096], [16], f32>) -> !fetch.stream<main, [4096], [16], f32>
  "rngd.commit"(%sw, %out) : (!fetch.stream<main, [4096], [16], f32>, memref<4096x16xf32>) -> ()
  // Properties may also be written in the attribute dictionary.
  %q = "fetch.fetch"(%x) {base = 64 : i64, read_size = 16 : i64} : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
  %r = "fetch.zp_sub"(%q) <{zero_point = 3 : i32}> : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i9>
  %acc = "rngd.contract_outer"(%r, %trf) : (!fetch.stream<main, [64], [32], i9>, !rngd.trf<i8>) -> !fetch.stream<main, [64], [32], i32>
  "rngd.commit"(%acc, %o) : (!fetch.stream<main, [64], [32], i32>, memref<64x32xi32>) -> ()
  %a = "fetch.fetch"(%y) : (memref<64x16xf8E5M2>) -> !fetch.stream<main, [64], [16], f8E5M2>
  %b = "fetch.convert"(%a) : (!fetch.stream<main, [64], [16], f8E5M2>) -> !fetch.stream<main, [64], [16], bf16>
  %t = "rngd.to_trf"(%b) : (!fetch.stream<main, [64], [16], bf16>) -> !rngd.trf<bf16>
  "func.return"(%t) : (!rngd.trf<bf16>) -> ()
}) : () -> ()

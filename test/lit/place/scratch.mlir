// fetch-place-dm places the compiler's scratch buffers (rngd.scratch, made by
// fetch-route-sub-decode) after every argument of the kernel: each at the next
// multiple of 64 bytes after the highest byte any argument takes (placed,
// inferred or explicit), in program order, bounded by dm-size.
// RUN: %fetchc %s --split-input-file --emit=mlir | FileCheck %s
// Placing again changes nothing (the scratch addresses are found again).
// RUN: %fetchc %s --split-input-file --emit=mlir | %fetchc - --split-input-file -p fetch-route-sub-decode,fetch-place-dm --emit=mlir | FileCheck %s

// %w: 80 bytes at 0x0; %o: 640 bytes at 0x80; %v: 80 bytes at 0x300 (ends
// at 0x350); the scratch buffers, after all three: 160 bytes at 0x380, then
// 160 bytes at 0x440 (0x420 rounded up).
// CHECK-LABEL: func.func @two_scratch(%w: memref<10x16xf4E2M1FN> {rngd.dm_base = 0 : i64, rngd.name = "w"}, %o: memref<10x16xf32> {rngd.dm_base = 128 : i64, rngd.name = "o"}, %v: memref<10x16xf4E2M1FN> {rngd.dm_base = 768 : i64, rngd.name = "v"}) -> !rngd.trf<f8E5M2> {
// CHECK-NEXT:    %scratch0 = rngd.scratch {dm_base = 896 : i64} : memref<10x16xf8E4M3FN>
// CHECK:         rngd.commit %{{.*}}, %scratch0
// CHECK-NEXT:    fetch.fetch %scratch0 {base = 896 : i64}
// CHECK:         %scratch1 = rngd.scratch {dm_base = 1088 : i64} : memref<10x16xf8E5M2>
// CHECK:         rngd.commit %{{.*}}, %scratch1
// CHECK-NEXT:    fetch.fetch %scratch1 {base = 1088 : i64}
func.func @two_scratch(%w: memref<10x16xf4E2M1FN>, %o: memref<10x16xf32>, %v: memref<10x16xf4E2M1FN>) -> !rngd.trf<f8E5M2> {
  %s = fetch.fetch %w : memref<10x16xf4E2M1FN> -> !fetch.stream<sub, [10], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [10], [16], f4E2M1FN> -> !fetch.stream<sub, [10], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [10], [16], f32>, memref<10x16xf32>
  %t = fetch.fetch %v : memref<10x16xf4E2M1FN> -> !fetch.stream<sub, [10], [16], f4E2M1FN>
  %e = fetch.convert %t : !fetch.stream<sub, [10], [16], f4E2M1FN> -> !fetch.stream<sub, [10], [16], f8E5M2>
  %r = rngd.to_trf %e : !fetch.stream<sub, [10], [16], f8E5M2> -> !rngd.trf<f8E5M2>
  func.return %r : !rngd.trf<f8E5M2>
}

// -----

// An explicitly placed argument high in DM: the scratch buffer goes after
// it, not into the gap below it.
// CHECK-LABEL: func.func @after_explicit(
// CHECK-SAME:    %w: memref<64x16xf4E2M1FN> {rngd.dm_base = 262144 : i64, rngd.name = "w"}, %o: memref<64x16xf32> {rngd.dm_base = 0 : i64, rngd.name = "o"}
// CHECK-NEXT:    %scratch0 = rngd.scratch {dm_base = 262656 : i64} : memref<64x16xf8E4M3FN>
func.func @after_explicit(%w: memref<64x16xf4E2M1FN> {rngd.dm_base = 262144 : i64}, %o: memref<64x16xf32> {rngd.dm_base = 0 : i64}) {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64], [16], f32>, memref<64x16xf32>
  func.return
}

// -----

// A scratch buffer written by hand is placed the same way.
// CHECK-LABEL: func.func @by_hand(%a: memref<4x16xi8> {rngd.dm_base = 0 : i64, rngd.name = "a"})
// CHECK-NEXT:    %b = rngd.scratch {dm_base = 64 : i64} : memref<4x16xi8>
// CHECK-NEXT:    fetch.fetch %a {base = 0 : i64}
// CHECK-NEXT:    rngd.commit
// CHECK-NEXT:    fetch.fetch %b {base = 64 : i64}
func.func @by_hand(%a: memref<4x16xi8>) -> !rngd.trf<i8> {
  %b = rngd.scratch : memref<4x16xi8>
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %b : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  %t = fetch.fetch %b : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %r = rngd.to_trf %t : !fetch.stream<sub, [4], [16], i8> -> !rngd.trf<i8>
  func.return %r : !rngd.trf<i8>
}

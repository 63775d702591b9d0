// fetch-route-sub-decode (hardware.md §2.1): a packed f4E2M1FN decode
// requested on the sub context (fetch.convert to f8E4M3FN / f8E5M2 / f32, or
// fetch.dequant) becomes the documented route: a main-context fetch of the
// same memref (same map, base and shape) with the paired table lookup,
// rngd.commit to a row-major DM scratch buffer (time then packet shape),
// then a convert-only sub-context fetch of the buffer that carries the sub
// stages that remain.  New fetches keep the original fetch's location.
// RUN: %fetchc %s --split-input-file -p fetch-route-sub-decode --emit=mlir | FileCheck %s
// The routed IR is legal input again (a fixpoint: nothing left to route).
// RUN: %fetchc %s --split-input-file -p fetch-route-sub-decode --emit=mlir | %fetchc - --split-input-file -p fetch-route-sub-decode --emit=mlir | FileCheck %s
// Routed locations: both fetches at the user's fetch, the rest at the convert.
// RUN: %fetchc %s --split-input-file -p fetch-route-sub-decode --emit=mlir --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @to_f8e4m3(%codes: memref<256x512xf4E2M1FN> {rngd.name = "codes"}) -> !rngd.trf<f8E4M3FN> {
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<256x16x32xf8E4M3FN>
// CHECK-NEXT:    %c = fetch.fetch %codes {map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 32) + d2))>} : memref<256x512xf4E2M1FN> -> !fetch.stream<main, [256, 16], [32], f4E2M1FN>
// CHECK-NEXT:    %[[L:.+]] = fetch.table_lookup %c : !fetch.stream<main, [256, 16], [32], f4E2M1FN> -> !fetch.stream<main, [256, 16], [32], f8E4M3FN>
// CHECK-NEXT:    rngd.commit %[[L]], %scratch0 : !fetch.stream<main, [256, 16], [32], f8E4M3FN>, memref<256x16x32xf8E4M3FN>
// CHECK-NEXT:    %d = fetch.fetch %scratch0 : memref<256x16x32xf8E4M3FN> -> !fetch.stream<sub, [256, 16], [32], f8E4M3FN>
// CHECK-NEXT:    %t = rngd.to_trf %d : !fetch.stream<sub, [256, 16], [32], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
// CHECK-NEXT:    func.return %t : !rngd.trf<f8E4M3FN>
// LOC-LABEL: func.func @to_f8e4m3
// LOC-NEXT:    rngd.scratch {{.*}} loc("{{.*}}route-sub-decode.mlir":[[# @LINE + 8]]:8)
// LOC-NEXT:    fetch.fetch %codes {{.*}} loc("{{.*}}route-sub-decode.mlir":[[# @LINE + 5]]:8)
// LOC-NEXT:    fetch.table_lookup {{.*}} loc("{{.*}}route-sub-decode.mlir":[[# @LINE + 6]]:8)
// LOC-NEXT:    rngd.commit {{.*}} loc("{{.*}}route-sub-decode.mlir":[[# @LINE + 5]]:8)
// LOC-NEXT:    fetch.fetch %scratch0 {{.*}} loc("{{.*}}route-sub-decode.mlir":[[# @LINE + 2]]:8)
func.func @to_f8e4m3(%codes: memref<256x512xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {
  %c = fetch.fetch %codes {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<256x512xf4E2M1FN> -> !fetch.stream<sub, [256, 16], [32], f4E2M1FN>
  %d = fetch.convert %c
      : !fetch.stream<sub, [256, 16], [32], f4E2M1FN> -> !fetch.stream<sub, [256, 16], [32], f8E4M3FN>
  %t = rngd.to_trf %d : !fetch.stream<sub, [256, 16], [32], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

// -----

// To f8E5M2: the paired e5m2 table; the staging fetch has no stage.
// CHECK-LABEL: func.func @to_f8e5m2(
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<64x16xf8E5M2>
// CHECK-NEXT:    %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<main, [64], [16], f4E2M1FN>
// CHECK-NEXT:    %[[L:.+]] = fetch.table_lookup %s : !fetch.stream<main, [64], [16], f4E2M1FN> -> !fetch.stream<main, [64], [16], f8E5M2>
// CHECK-NEXT:    rngd.commit %[[L]], %scratch0
// CHECK-NEXT:    %d = fetch.fetch %scratch0 : memref<64x16xf8E5M2> -> !fetch.stream<sub, [64], [16], f8E5M2>
// CHECK-NEXT:    rngd.to_trf %d
func.func @to_f8e5m2(%w: memref<64x16xf4E2M1FN>) -> !rngd.trf<f8E5M2> {
  %s = fetch.fetch %w : memref<64x16xf4E2M1FN> -> !fetch.stream<sub, [64], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [64], [16], f4E2M1FN> -> !fetch.stream<sub, [64], [16], f8E5M2>
  %t = rngd.to_trf %d : !fetch.stream<sub, [64], [16], f8E5M2> -> !rngd.trf<f8E5M2>
  func.return %t : !rngd.trf<f8E5M2>
}

// -----

// To f32 = lookup + cast: the lookup to f8E4M3FN on main, the f8E4M3FN -> f32
// cast on the staging fetch (sub).  The explicit base of the original fetch
// goes to the main fetch; its read_size (on sub, only the fixed 8 bytes) does
// not: the main fetch derives its own.
// CHECK-LABEL: func.func @to_f32(
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<4x2x16xf8E4M3FN>
// CHECK-NEXT:    %s = fetch.fetch %w {base = 4096 : i64, map = affine_map<(d0, d1, d2) -> (d0, ((d1 * 16) + d2))>} : memref<4x32xf4E2M1FN> -> !fetch.stream<main, [4, 2], [16], f4E2M1FN>
// CHECK-NEXT:    %[[L:.+]] = fetch.table_lookup %s : !fetch.stream<main, [4, 2], [16], f4E2M1FN> -> !fetch.stream<main, [4, 2], [16], f8E4M3FN>
// CHECK-NEXT:    rngd.commit %[[L]], %scratch0 : !fetch.stream<main, [4, 2], [16], f8E4M3FN>, memref<4x2x16xf8E4M3FN>
// CHECK-NEXT:    %[[S:.+]] = fetch.fetch %scratch0 : memref<4x2x16xf8E4M3FN> -> !fetch.stream<sub, [4, 2], [16], f8E4M3FN>
// CHECK-NEXT:    %d = fetch.cast %[[S]] : !fetch.stream<sub, [4, 2], [16], f8E4M3FN> -> !fetch.stream<sub, [4, 2], [16], f32>
// CHECK-NEXT:    rngd.commit %d, %o : !fetch.stream<sub, [4, 2], [16], f32>, memref<4x32xf32>
func.func @to_f32(%w: memref<4x32xf4E2M1FN>, %o: memref<4x32xf32>) {
  %s = fetch.fetch %w {base = 4096 : i64, read_size = 16 : i64, map = affine_map<(r, p, e) -> (r, p * 16 + e)>}
      : memref<4x32xf4E2M1FN> -> !fetch.stream<sub, [4, 2], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [4, 2], [16], f4E2M1FN> -> !fetch.stream<sub, [4, 2], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [4, 2], [16], f32>, memref<4x32xf32>
  func.return
}

// -----

// Identity casts between the fetch go with it; a cast written after the
// convert stays, now on the staging stream.
// CHECK-LABEL: func.func @stages_around(
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<8x16xf8E4M3FN>
// CHECK-NEXT:    %s = fetch.fetch %w : memref<8x16xf4E2M1FN> -> !fetch.stream<main, [8], [16], f4E2M1FN>
// CHECK-NEXT:    %[[L:.+]] = fetch.table_lookup %s
// CHECK-NEXT:    rngd.commit %[[L]], %scratch0
// CHECK-NEXT:    %d = fetch.fetch %scratch0 : memref<8x16xf8E4M3FN> -> !fetch.stream<sub, [8], [16], f8E4M3FN>
// CHECK-NEXT:    %f = fetch.cast %d : !fetch.stream<sub, [8], [16], f8E4M3FN> -> !fetch.stream<sub, [8], [16], f32>
// CHECK-NEXT:    rngd.commit %f, %o
// CHECK-NEXT:    func.return
func.func @stages_around(%w: memref<8x16xf4E2M1FN>, %o: memref<8x16xf32>) {
  %s = fetch.fetch %w : memref<8x16xf4E2M1FN> -> !fetch.stream<sub, [8], [16], f4E2M1FN>
  %i = fetch.cast %s : !fetch.stream<sub, [8], [16], f4E2M1FN> -> !fetch.stream<sub, [8], [16], f4E2M1FN>
  %d = fetch.convert %i : !fetch.stream<sub, [8], [16], f4E2M1FN> -> !fetch.stream<sub, [8], [16], f8E4M3FN>
  %f = fetch.cast %d : !fetch.stream<sub, [8], [16], f8E4M3FN> -> !fetch.stream<sub, [8], [16], f32>
  rngd.commit %f, %o : !fetch.stream<sub, [8], [16], f32>, memref<8x16xf32>
  func.return
}

// -----

// Two routed decodes: one scratch buffer each; each main decode comes right
// before its staging fetch, in the place of the original fetch.
// CHECK-LABEL: func.func @two(
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<8x16xf8E4M3FN>
// CHECK-NEXT:    %a = fetch.fetch %x : {{.*}} -> !fetch.stream<main, [8], [16], f4E2M1FN>
// CHECK-NEXT:    fetch.table_lookup %a
// CHECK-NEXT:    rngd.commit {{.*}}, %scratch0
// CHECK-NEXT:    %da = fetch.fetch %scratch0 : {{.*}} -> !fetch.stream<sub, [8], [16], f8E4M3FN>
// CHECK-NEXT:    %scratch1 = rngd.scratch : memref<8x16xf8E5M2>
// CHECK-NEXT:    %b = fetch.fetch %y : {{.*}} -> !fetch.stream<main, [8], [16], f4E2M1FN>
// CHECK-NEXT:    fetch.table_lookup %b
// CHECK-NEXT:    rngd.commit {{.*}}, %scratch1
// CHECK-NEXT:    %db = fetch.fetch %scratch1 : {{.*}} -> !fetch.stream<sub, [8], [16], f8E5M2>
// CHECK-NEXT:    rngd.to_trf %da
// CHECK-NEXT:    rngd.to_trf %db
func.func @two(%x: memref<8x16xf4E2M1FN>, %y: memref<8x16xf4E2M1FN>) -> (!rngd.trf<f8E4M3FN>, !rngd.trf<f8E5M2>) {
  %a = fetch.fetch %x : memref<8x16xf4E2M1FN> -> !fetch.stream<sub, [8], [16], f4E2M1FN>
  %b = fetch.fetch %y : memref<8x16xf4E2M1FN> -> !fetch.stream<sub, [8], [16], f4E2M1FN>
  %da = fetch.convert %a : !fetch.stream<sub, [8], [16], f4E2M1FN> -> !fetch.stream<sub, [8], [16], f8E4M3FN>
  %db = fetch.convert %b : !fetch.stream<sub, [8], [16], f4E2M1FN> -> !fetch.stream<sub, [8], [16], f8E5M2>
  %ta = rngd.to_trf %da : !fetch.stream<sub, [8], [16], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  %tb = rngd.to_trf %db : !fetch.stream<sub, [8], [16], f8E5M2> -> !rngd.trf<f8E5M2>
  func.return %ta, %tb : !rngd.trf<f8E4M3FN>, !rngd.trf<f8E5M2>
}

// -----

// fetch.dequant (nvfp4) on sub: the decode to f8E4M3FN on main; on sub the
// staging fetch, the block-scale fetch right after it (scale_base kept as its
// base) with its f8E4M3FN -> f32 cast, the f32 cast of the codes, then the
// Vector Engine's block scale and tensor scale.
// CHECK-LABEL: func.func @dequant_nvfp4(
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<16x128xf8E4M3FN>
// CHECK-NEXT:    %c = fetch.fetch %w : memref<16x128xf4E2M1FN> -> !fetch.stream<main, [16], [128], f4E2M1FN>
// CHECK-NEXT:    %[[L:.+]] = fetch.table_lookup %c : !fetch.stream<main, [16], [128], f4E2M1FN> -> !fetch.stream<main, [16], [128], f8E4M3FN>
// CHECK-NEXT:    rngd.commit %[[L]], %scratch0 : !fetch.stream<main, [16], [128], f8E4M3FN>, memref<16x128xf8E4M3FN>
// CHECK-NEXT:    %[[S:.+]] = fetch.fetch %scratch0 : memref<16x128xf8E4M3FN> -> !fetch.stream<sub, [16], [128], f8E4M3FN>
// CHECK-NEXT:    %[[B:.+]] = fetch.fetch %bs {base = 65536 : i64, map = affine_map<(d0, d1) -> (d0, d1)>} : memref<16x8xf8E4M3FN> -> !fetch.stream<sub, [16], [8], f8E4M3FN>
// CHECK-NEXT:    %[[BF:.+]] = fetch.cast %[[B]] : !fetch.stream<sub, [16], [8], f8E4M3FN> -> !fetch.stream<sub, [16], [8], f32>
// CHECK-NEXT:    %[[F:.+]] = fetch.cast %[[S]] : !fetch.stream<sub, [16], [128], f8E4M3FN> -> !fetch.stream<sub, [16], [128], f32>
// CHECK-NEXT:    %[[X:.+]] = rngd.block_scale %[[F]], %[[BF]] {block = 16 : i64} : !fetch.stream<sub, [16], [128], f32>, !fetch.stream<sub, [16], [8], f32> -> !fetch.stream<sub, [16], [128], f32>
// CHECK-NEXT:    %[[Y:.+]] = rngd.tensor_scale %[[X]], %g : !fetch.stream<sub, [16], [128], f32>, f32 -> !fetch.stream<sub, [16], [128], f32>
// CHECK-NEXT:    rngd.commit %[[Y]], %o : !fetch.stream<sub, [16], [128], f32>, memref<16x128xf32>
// CHECK-NOT:     fetch.dequant
func.func @dequant_nvfp4(%w: memref<16x128xf4E2M1FN>, %bs: memref<16x8xf8E4M3FN>, %g: f32, %o: memref<16x128xf32>) {
  %c = fetch.fetch %w : memref<16x128xf4E2M1FN> -> !fetch.stream<sub, [16], [128], f4E2M1FN>
  %d = fetch.dequant %c, %bs, %g {format = "nvfp4", scale_base = 65536 : i64} : !fetch.stream<sub, [16], [128], f4E2M1FN>, memref<16x8xf8E4M3FN>, f32 -> !fetch.stream<sub, [16], [128], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [16], [128], f32>, memref<16x128xf32>
  func.return
}

// -----

// mxfp4: the e8m0 block scales are fetched raw (no cast) on sub; no tensor
// scale.  Without scale_base the scale fetch has no base: fetch-place-dm
// places the scale memref.
// CHECK-LABEL: func.func @dequant_mxfp4(
// CHECK-NEXT:    %scratch0 = rngd.scratch : memref<4x256xf8E4M3FN>
// CHECK-NEXT:    %c = fetch.fetch %w : memref<4x256xf4E2M1FN> -> !fetch.stream<main, [4], [256], f4E2M1FN>
// CHECK-NEXT:    %[[L:.+]] = fetch.table_lookup %c
// CHECK-NEXT:    rngd.commit %[[L]], %scratch0
// CHECK-NEXT:    %[[S:.+]] = fetch.fetch %scratch0 : memref<4x256xf8E4M3FN> -> !fetch.stream<sub, [4], [256], f8E4M3FN>
// CHECK-NEXT:    %[[B:.+]] = fetch.fetch %e {map = affine_map<(d0, d1) -> (d0, d1)>} : memref<4x8xf8E8M0FNU> -> !fetch.stream<sub, [4], [8], f8E8M0FNU>
// CHECK-NEXT:    %[[F:.+]] = fetch.cast %[[S]] : !fetch.stream<sub, [4], [256], f8E4M3FN> -> !fetch.stream<sub, [4], [256], f32>
// CHECK-NEXT:    %[[X:.+]] = rngd.block_scale %[[F]], %[[B]] {block = 32 : i64} : !fetch.stream<sub, [4], [256], f32>, !fetch.stream<sub, [4], [8], f8E8M0FNU> -> !fetch.stream<sub, [4], [256], f32>
// CHECK-NEXT:    rngd.commit %[[X]], %o
func.func @dequant_mxfp4(%w: memref<4x256xf4E2M1FN>, %e: memref<4x8xf8E8M0FNU>, %o: memref<4x256xf32>) {
  %c = fetch.fetch %w : memref<4x256xf4E2M1FN> -> !fetch.stream<sub, [4], [256], f4E2M1FN>
  %d = fetch.dequant %c, %e {format = "mxfp4"} : !fetch.stream<sub, [4], [256], f4E2M1FN>, memref<4x8xf8E8M0FNU> -> !fetch.stream<sub, [4], [256], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [4], [256], f32>, memref<4x256xf32>
  func.return
}

// -----

// Left alone: decodes on main, and a sub-context lookup the route does not
// cover (f8 -> bf16 needs the non-paired table; fetch-legalize-convert
// reports it).
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT:     rngd.scratch
// CHECK:         fetch.convert %m : !fetch.stream<main, [8], [16], f4E2M1FN> -> !fetch.stream<main, [8], [16], f8E4M3FN>
// CHECK:         fetch.convert %n : !fetch.stream<sub, [8], [8], f8E4M3FN> -> !fetch.stream<sub, [8], [8], bf16>
// CHECK:         fetch.dequant %q, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [16], [32], f4E2M1FN>
// CHECK-NOT:     rngd.scratch
func.func @untouched(%w: memref<8x16xf4E2M1FN>, %a: memref<8x8xf8E4M3FN>, %x: memref<16x32xf4E2M1FN>, %bs: memref<16x2xf8E4M3FN>, %g: f32,
                     %o1: memref<8x16xf8E4M3FN>, %o2: memref<8x8xbf16>, %o3: memref<16x32xf32>) {
  %m = fetch.fetch %w : memref<8x16xf4E2M1FN> -> !fetch.stream<main, [8], [16], f4E2M1FN>
  %dm = fetch.convert %m : !fetch.stream<main, [8], [16], f4E2M1FN> -> !fetch.stream<main, [8], [16], f8E4M3FN>
  rngd.commit %dm, %o1 : !fetch.stream<main, [8], [16], f8E4M3FN>, memref<8x16xf8E4M3FN>
  %n = fetch.fetch %a : memref<8x8xf8E4M3FN> -> !fetch.stream<sub, [8], [8], f8E4M3FN>
  %dn = fetch.convert %n : !fetch.stream<sub, [8], [8], f8E4M3FN> -> !fetch.stream<sub, [8], [8], bf16>
  rngd.commit %dn, %o2 : !fetch.stream<sub, [8], [8], bf16>, memref<8x8xbf16>
  %q = fetch.fetch %x : memref<16x32xf4E2M1FN> -> !fetch.stream<main, [16], [32], f4E2M1FN>
  %dq = fetch.dequant %q, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [16], [32], f4E2M1FN>, memref<16x2xf8E4M3FN>, f32 -> !fetch.stream<main, [16], [32], f32>
  rngd.commit %dq, %o3 : !fetch.stream<main, [16], [32], f32>, memref<16x32xf32>
  func.return
}

// -----

// A scratch buffer is named after its MANIFEST tensor, skipping the names of
// the kernel's arguments; a hand-written rngd.scratch keeps its own name but
// counts in program order.
// CHECK-LABEL: func.func @names(
// CHECK-NEXT:    %b = rngd.scratch : memref<4x16xi8>
// CHECK:         %scratch2 = rngd.scratch : memref<8x16xf8E4M3FN>
// CHECK:         rngd.commit %{{.*}}, %scratch2
// CHECK-NEXT:    fetch.fetch %scratch2
func.func @names(%scratch1: memref<8x16xf4E2M1FN>, %a: memref<4x16xi8>) -> (!rngd.trf<i8>, !rngd.trf<f8E4M3FN>) {
  %b = rngd.scratch : memref<4x16xi8>
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %b : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  %t = fetch.fetch %b : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %r = rngd.to_trf %t : !fetch.stream<sub, [4], [16], i8> -> !rngd.trf<i8>
  %c = fetch.fetch %scratch1 : memref<8x16xf4E2M1FN> -> !fetch.stream<sub, [8], [16], f4E2M1FN>
  %d = fetch.convert %c : !fetch.stream<sub, [8], [16], f4E2M1FN> -> !fetch.stream<sub, [8], [16], f8E4M3FN>
  %q = rngd.to_trf %d : !fetch.stream<sub, [8], [16], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %r, %q : !rngd.trf<i8>, !rngd.trf<f8E4M3FN>
}

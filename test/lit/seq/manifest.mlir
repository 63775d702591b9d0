// seq.bin 1.1 MANIFEST (seqbin.md): every memref argument of the kernel is a
// tensor (placement from rngd.dm_base, layout in elements, bytes from the
// lowest to the highest byte, 4-bit types two per byte rounded up), f32
// arguments are scalars, and each program names its tensor, stream shape and
// source line.  `fetchc dis` shows it in the text and in --json.
// RUN: %fetchc %s -o %t.bin
// RUN: %fetchc dis %t.bin | FileCheck %s
// RUN: %fetchc dis --json %t.bin | FileCheck %s --check-prefix=JSON
// The stored section is canonical JSON (sorted keys, "," and ":" separators,
// no spaces, no trailing newline) and the file ends where it ends.
// RUN: %python -c "import json, struct, sys; d = open(sys.argv[1], 'rb').read(); rows = [struct.unpack_from('<IIII', d, 32 + 16 * i) for i in range(4)]; (off, size), = [(o, s) for k, o, s, c in rows if k == 4]; m = d[off:off + size]; print('canonical' if m == json.dumps(json.loads(m), sort_keys=True, separators=(',', ':'), ensure_ascii=False).encode() and off + size == len(d) else 'not canonical')" %t.bin | FileCheck %s --check-prefix=CANON
// CANON: canonical

// CHECK:      seq.bin version 1.2, {{[0-9]+}} bytes, crc32 0x{{[0-9a-f]+}}
// CHECK-NEXT: sections: 4
// CHECK-NEXT: section TABLES: offset 96, size 536, count 1
// CHECK-NEXT: section PROGRAMS: offset 632, size 256, count 2
// CHECK-NEXT: section STRINGS: offset 888, size 8, count 2
// CHECK-NEXT: section MANIFEST: offset 896, size {{[0-9]+}}, count 1
// CHECK:      program 0: "k/0"
// CHECK:        flit_count: 1
// CHECK-NEXT:   words_per_packet: {{[0-9]+}}
// CHECK-NEXT:   kernel: k
// CHECK-NEXT:   tensor: w (arg 0)
// CHECK-NEXT:   stream: time [3, 5] packet [2]
// CHECK-NEXT:   loc: {{.*}}manifest.mlir:[[# @LINE + 51]]:8
// CHECK:      program 1: "k/1"
// CHECK:        base: 0x2010 (8208)
// CHECK:        flit_count: 2
// CHECK-NEXT:   words_per_packet: {{[0-9]+}}
// CHECK-NEXT:   kernel: k
// CHECK-NEXT:   tensor: s (arg 1)
// CHECK-NEXT:   stream: time [4] packet [16]
// CHECK-NEXT:   loc: {{.*}}manifest.mlir:[[# @LINE + 46]]:8
// CHECK-NEXT: manifest: producer "fetchc {{[0-9.]+}}"
// CHECK-NEXT: kernels: 1
// CHECK-NEXT: kernel 0: k
// CHECK-NEXT:   slices: 1
// CHECK-NEXT:   tensors: 5
// CHECK-NEXT:   tensor 0: w (arg 0)
// CHECK-NEXT:     dtype: f4E2M1FN
// CHECK-NEXT:     shape: [3, 10]
// CHECK-NEXT:     layout: strides [10, 1], offset 0
// CHECK-NEXT:     dm_base: 0x1000 (4096)
// CHECK-NEXT:     bytes: 15
// CHECK-NEXT:     use: read
// CHECK-NEXT:   tensor 1: s (arg 1)
// CHECK-NEXT:     dtype: bf16
// CHECK-NEXT:     shape: [4, 16]
// CHECK-NEXT:     layout: strides [32, 1], offset 8
// CHECK-NEXT:     dm_base: 0x2000 (8192)
// CHECK-NEXT:     bytes: 224
// CHECK-NEXT:     use: read
// CHECK-NEXT:   tensor 2: o (arg 3)
// CHECK-NEXT:     dtype: f8E4M3FN
// CHECK-NEXT:     shape: [3, 10]
// CHECK-NEXT:     layout: strides [10, 1], offset 0
// CHECK-NEXT:     dm_base: 0x4000 (16384)
// CHECK-NEXT:     bytes: 30
// CHECK-NEXT:     use: committed
// CHECK-NEXT:   tensor 3: o2 (arg 4)
// CHECK:          use: committed
// CHECK-NEXT:   tensor 4: unused (arg 5)
// CHECK-NEXT:     dtype: i4
// CHECK-NEXT:     shape: [7]
// CHECK-NEXT:     layout: strides [1], offset 0
// CHECK-NEXT:     dm_base: 0x6000 (24576)
// CHECK-NEXT:     bytes: 4
// CHECK-NEXT:     use: none
// CHECK-NEXT:   scalars: 1
// CHECK-NEXT:   scalar 0: g (arg 2)
// CHECK-NEXT:     dtype: f32
// CHECK-NEXT:   program indices: 0, 1
// CHECK-NOT:  {{.}}

func.func @k(%w: memref<3x10xf4E2M1FN> {rngd.dm_base = 4096 : i64}, %s: memref<4x16xbf16, strided<[32, 1], offset: 8>> {rngd.dm_base = 8192 : i64}, %g: f32, %o: memref<3x10xf8E4M3FN> {rngd.dm_base = 16384 : i64}, %o2: memref<4x16xf32> {rngd.dm_base = 20480 : i64}, %unused: memref<7xi4> {rngd.dm_base = 24576 : i64}) {
  %a = fetch.fetch %w {base = 4096 : i64, map = affine_map<(t, u, p) -> (t, u * 2 + p)>} : memref<3x10xf4E2M1FN> -> !fetch.stream<main, [3, 5], [2], f4E2M1FN>
  %b = fetch.convert %a : !fetch.stream<main, [3, 5], [2], f4E2M1FN> -> !fetch.stream<main, [3, 5], [2], f8E4M3FN>
  rngd.commit %b, %o : !fetch.stream<main, [3, 5], [2], f8E4M3FN>, memref<3x10xf8E4M3FN>
  %c = fetch.fetch %s {base = 8192 : i64} : memref<4x16xbf16, strided<[32, 1], offset: 8>> -> !fetch.stream<main, [4], [16], bf16>
  %d = fetch.convert %c : !fetch.stream<main, [4], [16], bf16> -> !fetch.stream<main, [4], [16], f32>
  rngd.commit %d, %o2 : !fetch.stream<main, [4], [16], f32>, memref<4x16xf32>
  func.return
}

// JSON:      "version": "1.2",
// JSON:      "manifest": {
// JSON-NEXT:   "kernels": [
// JSON-NEXT:     {
// JSON-NEXT:       "name": "k",
// JSON-NEXT:       "programs": [
// JSON-NEXT:         {
// JSON-NEXT:           "index": 0,
// JSON-NEXT:           "loc": "{{.*}}manifest.mlir:{{[0-9]+}}:8",
// JSON-NEXT:           "out_dtype": "f8E4M3FN",
// JSON-NEXT:           "packet": [
// JSON-NEXT:             2
// JSON-NEXT:           ],
// JSON-NEXT:           "tensor": 0,
// JSON-NEXT:           "time": [
// JSON-NEXT:             3,
// JSON-NEXT:             5
// JSON-NEXT:           ]
// JSON-NEXT:         },
// JSON:            "scalars": [
// JSON-NEXT:         {
// JSON-NEXT:           "arg": 2,
// JSON-NEXT:           "dtype": "f32",
// JSON-NEXT:           "name": "g"
// JSON-NEXT:         }
// JSON-NEXT:       ],
// JSON-NEXT:       "slices": 1,
// JSON-NEXT:       "tensors": [
// JSON-NEXT:         {
// JSON-NEXT:           "arg": 0,
// JSON-NEXT:           "bytes": 15,
// JSON-NEXT:           "committed": false,
// JSON-NEXT:           "dm_base": 4096,
// JSON-NEXT:           "dtype": "f4E2M1FN",
// JSON-NEXT:           "name": "w",
// JSON-NEXT:           "offset": 0,
// JSON-NEXT:           "read": true,
// JSON-NEXT:           "shape": [
// JSON:            "producer": "fetchc {{[0-9.]+}}"
// JSON-NEXT: }
// JSON-NEXT: }

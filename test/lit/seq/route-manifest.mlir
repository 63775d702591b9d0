// A routed sub-context decode in seq.bin: the MANIFEST lists the scratch
// buffer as a tensor after the arguments ("arg": null, "scratch": true,
// scratch0), placed at the next 64-byte boundary after every argument; the
// main-context decode program comes first (it writes the buffer), then the
// convert-only sub program that reads it; names function/index in op order.
// RUN: %fetchc %s -o %t.bin
// RUN: %fetchc dis %t.bin | FileCheck %s
// The MANIFEST section's canonical JSON, as stored in the file:
// RUN: %python -c "import sys; d = open(sys.argv[1], 'rb').read(); print(d[d.index(b'{\"kernels\"'):].decode())" %t.bin | FileCheck %s --check-prefix=JSON

// CHECK:      programs: 5
// CHECK:      program 0: "stage/0"
// CHECK-NEXT:   unit: main
// CHECK-NEXT:   in_dtype: f4E2M1FN
// CHECK-NEXT:   out_dtype: f8E4M3FN
// CHECK-NEXT:   base: 0x0 (0)
// CHECK-NEXT:   sequencer: [256 : 512, 512 : 1] : 32
// CHECK-NEXT:   fetch_size: 16
// CHECK-NEXT:   stages: table_lookup
// CHECK-NEXT:   table: 0
// CHECK-NEXT:   type_conversion: none
// CHECK:        words_per_packet: 1
// CHECK:        tensor: codes (arg 0)
// CHECK-NEXT:   stream: time [256, 16] packet [32]
// CHECK-NEXT:   loc: {{.*}}route-manifest.mlir:[[# @LINE + 70]]:8
// CHECK:      program 1: "stage/1"
// CHECK-NEXT:   unit: sub
// CHECK-NEXT:   in_dtype: f8E4M3FN
// CHECK-NEXT:   out_dtype: f8E4M3FN
// CHECK-NEXT:   base: 0x10000 (65536)
// CHECK-NEXT:   sequencer: [256 : 512, 512 : 1] : 32
// CHECK-NEXT:   fetch_size: 8
// CHECK-NEXT:   stages: none
// CHECK-NEXT:   table: none
// CHECK-NEXT:   type_conversion: none
// CHECK:        words_per_packet: 4
// CHECK:        tensor: scratch0 (scratch)
// CHECK-NEXT:   stream: time [256, 16] packet [32]
// CHECK-NEXT:   loc: {{.*}}route-manifest.mlir:[[# @LINE + 56]]:8
// CHECK:      program 2: "dq/0"
// CHECK-NEXT:   unit: main
// CHECK:        stages: table_lookup
// CHECK:        tensor: w (arg 0)
// CHECK:      program 3: "dq/1"
// CHECK-NEXT:   unit: sub
// CHECK-NEXT:   in_dtype: f8E4M3FN
// CHECK-NEXT:   out_dtype: f32
// CHECK-NEXT:   base: 0x9200 (37376)
// CHECK:        stages: type_conversion
// CHECK:        tensor: scratch0 (scratch)
// CHECK:      program 4: "dq/2"
// CHECK-NEXT:   unit: sub
// CHECK-NEXT:   in_dtype: f8E4M3FN
// CHECK-NEXT:   out_dtype: f32
// CHECK-NEXT:   base: 0x1000 (4096)
// CHECK:        tensor: bs (arg 1)
// CHECK:      kernel 0: stage
// CHECK-NEXT:   slices: 1
// CHECK-NEXT:   tensors: 2
// CHECK-NEXT:   tensor 0: codes (arg 0)
// CHECK:          dm_base: 0x0 (0)
// CHECK-NEXT:     bytes: 65536
// CHECK-NEXT:     use: read
// CHECK-NEXT:   tensor 1: scratch0 (scratch)
// CHECK-NEXT:     dtype: f8E4M3FN
// CHECK-NEXT:     shape: [256, 16, 32]
// CHECK-NEXT:     layout: strides [512, 32, 1], offset 0
// CHECK-NEXT:     dm_base: 0x10000 (65536)
// CHECK-NEXT:     bytes: 131072
// CHECK-NEXT:     use: read, committed
// CHECK-NEXT:   scalars: 0
// CHECK-NEXT:   program indices: 0, 1
// CHECK:      kernel 1: dq
// CHECK-NEXT:   slices: 1
// CHECK-NEXT:   tensors: 4
// CHECK:        tensor 2: o (arg 3)
// CHECK-NEXT:     dtype: f32
// CHECK-NEXT:     shape: [64, 128]
// CHECK-NEXT:     layout: strides [128, 1], offset 0
// CHECK-NEXT:     dm_base: 0x1200 (4608)
// CHECK-NEXT:     bytes: 32768
// CHECK-NEXT:     use: committed
// CHECK-NEXT:   tensor 3: scratch0 (scratch)
// CHECK-NEXT:     dtype: f8E4M3FN
// CHECK-NEXT:     shape: [64, 128]
// CHECK-NEXT:     layout: strides [128, 1], offset 0
// CHECK-NEXT:     dm_base: 0x9200 (37376)
// CHECK-NEXT:     bytes: 8192
// CHECK-NEXT:     use: read, committed
// CHECK:        program indices: 2, 3, 4

// JSON: {"arg":0,"bytes":65536,"committed":false,"dm_base":0,"dtype":"f4E2M1FN","name":"codes","offset":0,"read":true,"shape":[256,512],"slice_dim":null,"strides":[512,1]},{"arg":null,"bytes":131072,"committed":true,"dm_base":65536,"dtype":"f8E4M3FN","name":"scratch0","offset":0,"read":true,"scratch":true,"shape":[256,16,32],"slice_dim":null,"strides":[512,32,1]}

func.func @stage(%codes: memref<256x512xf4E2M1FN>) -> !rngd.trf<f8E4M3FN> {
  %c = fetch.fetch %codes {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<256x512xf4E2M1FN> -> !fetch.stream<sub, [256, 16], [32], f4E2M1FN>
  %d = fetch.convert %c
      : !fetch.stream<sub, [256, 16], [32], f4E2M1FN> -> !fetch.stream<sub, [256, 16], [32], f8E4M3FN>
  %t = rngd.to_trf %d : !fetch.stream<sub, [256, 16], [32], f8E4M3FN> -> !rngd.trf<f8E4M3FN>
  func.return %t : !rngd.trf<f8E4M3FN>
}

func.func @dq(%w: memref<64x128xf4E2M1FN>, %bs: memref<64x8xf8E4M3FN>, %g: f32, %o: memref<64x128xf32>) {
  %s = fetch.fetch %w : memref<64x128xf4E2M1FN> -> !fetch.stream<sub, [64], [128], f4E2M1FN>
  %d = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<sub, [64], [128], f4E2M1FN>, memref<64x8xf8E4M3FN>, f32 -> !fetch.stream<sub, [64], [128], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [64], [128], f32>, memref<64x128xf32>
  func.return
}

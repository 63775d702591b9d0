// RUN: %fetchc %s --emit=mlir | FileCheck %s
// RUN: %fetchc %s -o %t.bin && %fetchc dis %t.bin | FileCheck %s --check-prefix=DIS

// CHECK: func.func @decode
// CHECK: fetch.table_lookup {{.*}} -> !fetch.stream<main, [4096], [16], f8E4M3FN>
// DIS: program 0: "decode/0"
// DIS-NEXT: unit: main
// DIS: sequencer: [65536 : 1] : 16
func.func @decode(%w: memref<4096x16xf4E2M1FN>, %out: memref<4096x16xf8E4M3FN>) {
  %s = fetch.fetch %w {base = 32768 : i64} : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<main, [4096], [16], f4E2M1FN> -> !fetch.stream<main, [4096], [16], f8E4M3FN>
  rngd.commit %d, %out : !fetch.stream<main, [4096], [16], f8E4M3FN>, memref<4096x16xf8E4M3FN>
  func.return
}

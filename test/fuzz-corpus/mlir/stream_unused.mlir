func.func @f(%m: memref<16x16xi8>) {
  %s0 = fetch.fetch %m {base = 0 : i64} : memref<16x16xi8> -> !fetch.stream<main, [16], [16], i8>
  %s1 = fetch.cast %s0 : !fetch.stream<main, [16], [16], i8> -> !fetch.stream<main, [16], [16], i32>
  func.return
}

func.func @decode(%w: memref<4096x16xf4E2M1FN>, %out: memref<4096x16xf8E4M3FN>) {
  %s = fetch.fetch"%w {base = 6291456 : i64} : memref<4096x16xf4E2M1FN> -> !fetch.stream<main, [4096], [16], f4E2M1FN> and a long tail of text to make the backtracking exponential
  func.return
}

func.func @k(%a: memref<4x16xf8E4M3FN>, %o: memref<4x16xbf16>) {
  %s = fetch.fetch %a : memref<4x16xf8E4M3FN> -> !fetch.stream<main, [4], [16], f8E4M3FN>
  %c = fetch.cast %s : !fetch.stream<main, [4], [16], f8E4M3FN> -> !fetch.stream<main, [4], [16], bf16> loc(fused["/etc/passwd":1:1, "/proc/self/environ":1:1, "/dev/zero":1:1])
  rngd.commit %c, %o : !fetch.stream<main, [4], [16], bf16>, memref<4x16xbf16>
  func.return
}

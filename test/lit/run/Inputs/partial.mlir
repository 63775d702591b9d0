// A decoded weight committed to DM (f8E4M3FN -> bf16 through the non-paired
// table) beside an int8 contraction committed elsewhere (its residuals
// collected into 32-byte flits): fetchc run computes the weight and leaves
// the accumulator out with a warning (ir.md §5, hardware.md §2.6).
func.func @mixed(%w: memref<2x32xf8E4M3FN>, %wd: memref<2x32xbf16>,
                 %q: memref<8x32xi8>, %x: memref<4x32xi8>, %acc: memref<4x32xi32>) {
  %ws = fetch.fetch %w : memref<2x32xf8E4M3FN> -> !fetch.stream<main, [2], [32], f8E4M3FN>
  %wb = fetch.convert %ws : !fetch.stream<main, [2], [32], f8E4M3FN> -> !fetch.stream<main, [2], [32], bf16>
  rngd.commit %wb, %wd : !fetch.stream<main, [2], [32], bf16>, memref<2x32xbf16>
  %qs = fetch.fetch %q : memref<8x32xi8> -> !fetch.stream<sub, [8], [32], i8>
  %qt = rngd.to_trf %qs : !fetch.stream<sub, [8], [32], i8> -> !rngd.trf<i8>
  %xs = fetch.fetch %x : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  %xz = fetch.zp_sub %xs, -3 : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], i9>
  %xc = rngd.collect %xz : !fetch.stream<main, [4], [32], i9> -> !fetch.stream<main, [4, 2], [16], i9>
  %y = rngd.contract_outer %xc, %qt : !fetch.stream<main, [4, 2], [16], i9>, !rngd.trf<i8> -> !fetch.stream<main, [4, 2], [16], i32>
  rngd.commit %y, %acc : !fetch.stream<main, [4, 2], [16], i32>, memref<4x32xi32>
  func.return
}

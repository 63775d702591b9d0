// LF line
// CRLF line
// CR line// LF again
func.func @k(%a: memref<64x32xi8>, %b: memref<64x32xi16>) {
  %s = fetch.fetch %a {base = 0 : i64} : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>  %c = fetch.cast %s : !fetch.stream<main, [64], [32], i8> -> !fetch.stream<main, [64], [32], i16>
  rngd.commit %c, %b : !fetch.stream<main, [64], [32], i16>, memref<64x32xi16>
  func.return}

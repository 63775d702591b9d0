

func.func @i8_low(%a: memref<64x32xi8>, %t: !rngd.trf<i8>, %o: memref<64x32xi32~)${
  %q = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  %z = fetch.zp_su` %q, -128 : !fetgh.stream<main, [64], [32], i8> -> !fetch.str
// Every location form MLIR prints, on ops that fail verification (ir.md §5).
// Checked by ../locations.test; the line numbers there refer to this file.
#before = loc("Inputs/kernel.py":5:9)
"builtin.module"() ({
  "func.func"() <{sym_name = "k", function_type = (memref<64x32xi8>, memref<64x32xi16>) -> ()}> ({
  ^bb0(%a: memref<64x32xi8>, %b: memref<64x32xi16>):
    %f0 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c0 = "fetch.cast"(%f0) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16>
    "rngd.commit"(%c0, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f1 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c1 = "fetch.cast"(%f1) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc("Inputs/kernel.py":5:9)
    "rngd.commit"(%c1, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f2 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c2 = "fetch.cast"(%f2) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(#before)
    "rngd.commit"(%c2, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f3 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c3 = "fetch.cast"(%f3) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(#after)
    "rngd.commit"(%c3, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f4 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c4 = "fetch.cast"(%f4) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(#chain)
    "rngd.commit"(%c4, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f5 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c5 = "fetch.cast"(%f5) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc("cast_y"("Inputs/kernel.py":5:13))
    "rngd.commit"(%c5, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f6 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c6 = "fetch.cast"(%f6) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc("cast_z")
    "rngd.commit"(%c6, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f7 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c7 = "fetch.cast"(%f7) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(callsite("Inputs/kernel.py":10:12 at callsite("Inputs/kernel.py":14:12 at "Inputs/kernel.py":5:9)))
    "rngd.commit"(%c7, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f8 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c8 = "fetch.cast"(%f8) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(fused<"tag">[unknown, "Inputs/kernel.py":5:9, "other"("Inputs/kernel.py":6:5)])
    "rngd.commit"(%c8, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f9 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c9 = "fetch.cast"(%f9) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(unknown)
    "rngd.commit"(%c9, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f10 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c10 = "fetch.cast"(%f10) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc("Inputs/kernel.py":5:9 to 5:20)
    "rngd.commit"(%c10, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f11 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c11 = "fetch.cast"(%f11) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc("Inputs/kernel.py":5:9 to :20)
    "rngd.commit"(%c11, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %f12 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %c12 = "fetch.cast"(%f12) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc("Inputs/kernel.py":6)
    "rngd.commit"(%c12, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()
#chain = loc(callsite(#callee at #caller))
#callee = loc("Inputs/kernel.py":10:12)
#caller = loc("Inputs/kernel.py":5:9)
#after = loc("Inputs/kernel.py":5:13)

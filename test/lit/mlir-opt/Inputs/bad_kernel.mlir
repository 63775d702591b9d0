// A kernel in generic form with three errors, for the mlir-opt round trip:
// after `mlir-opt --mlir-print-debuginfo --mlir-print-op-generic` fetchc must
// report them at these lines (see ../debuginfo_errors.test).
"builtin.module"() ({
  "func.func"() <{sym_name = "k", function_type = (memref<64x32xi8>, memref<64x32xi16>) -> ()}> ({
  ^bb0(%a: memref<64x32xi8>, %b: memref<64x32xi16>):
    %0 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %1 = "fetch.cast"(%0) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16>
    "rngd.commit"(%1, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %2 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    %3 = "fetch.cast"(%2) : (!fetch.stream<main, [64], [32], i8>) -> !fetch.stream<main, [64], [32], i16> loc(callsite("helper.py":20:9 at "kernel.py":13:5))
    "rngd.commit"(%3, %b) : (!fetch.stream<main, [64], [32], i16>, memref<64x32xi16>) -> ()
    %4 = "fetch.fetch"(%a) <{base = 0 : i64}> : (memref<64x32xi8>) -> !fetch.stream<main, [64], [32], i8>
    "func.return"() : () -> ()
  }) : () -> ()
}) : () -> ()

// ir.md §3 rule 1, function tables (hardware.md §2.1b): fetch.table_lookup with
// fn on f8E4M3FN, f8E5M2, i8, bf16, i16 keys into bf16; scale / zero_point only
// on integer keys and legal there; every violation a located error saying the fix.
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s


// -----

// Valid: functions on every key type, with and without scale and zero point.
func.func @ok0(%a: memref<4x32xf8E4M3FN>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xf8E4M3FN> -> !fetch.stream<main, [4], [32], f8E4M3FN>
  %l = fetch.table_lookup %s {fn = "gelu"} : !fetch.stream<main, [4], [32], f8E4M3FN> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok1(%a: memref<4x32xf8E5M2>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xf8E5M2> -> !fetch.stream<main, [4], [32], f8E5M2>
  %l = fetch.table_lookup %s {fn = "gelu_tanh"} : !fetch.stream<main, [4], [32], f8E5M2> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok2(%a: memref<4x32xbf16>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xbf16> -> !fetch.stream<main, [4], [32], bf16>
  %l = fetch.table_lookup %s {fn = "sigmoid"} : !fetch.stream<main, [4], [32], bf16> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok3(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  %l = fetch.table_lookup %s {fn = "silu", scale = 0.0625 : f32, zero_point = 3 : i32} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok4(%a: memref<4x32xi16>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi16> -> !fetch.stream<main, [4], [32], i16>
  %l = fetch.table_lookup %s {fn = "identity", scale = 9.765625e-04 : f32, zero_point = -32768 : i32} : !fetch.stream<main, [4], [32], i16> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok5(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  %l = fetch.table_lookup %s {fn = "relu"} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok6(%a: memref<4x32xbf16>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xbf16> -> !fetch.stream<main, [4], [32], bf16>
  %l = fetch.table_lookup %s {fn = "tanh"} : !fetch.stream<main, [4], [32], bf16> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

func.func @ok7(%a: memref<4x32xf8E4M3FN>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xf8E4M3FN> -> !fetch.stream<main, [4], [32], f8E4M3FN>
  %l = fetch.table_lookup %s {fn = "exp"} : !fetch.stream<main, [4], [32], f8E4M3FN> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// An unknown function lists the known ones.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'fetch.table_lookup' op has no function 'swish'; the function tables are identity, relu, gelu, gelu_tanh, sigmoid, silu, tanh, exp}}
  %l = fetch.table_lookup %s {fn = "swish"} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// fn must be a string.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'fn' must be a string naming a function}}
  %l = fetch.table_lookup %s {fn = 3 : i32} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// The paired f4 decode takes no function.
func.func @k(%a: memref<4x32xf4E2M1FN>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xf4E2M1FN> -> !fetch.stream<main, [4], [32], f4E2M1FN>
  // expected-error @+1 {{the paired f4E2M1FN decode takes no function (a 4-bit key is only ever a packed pair); decode to f8E4M3FN with a plain fetch.table_lookup, commit it to DM with rngd.commit, and fetch that through the gelu table}}
  %l = fetch.table_lookup %s {fn = "gelu"} : !fetch.stream<main, [4], [32], f4E2M1FN> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// A key type without function tables.
func.func @k(%a: memref<4x32xf32>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xf32> -> !fetch.stream<main, [4], [32], f32>
  // expected-error @+1 {{has no function table keyed by f32; function tables are keyed by f8E4M3FN, f8E5M2, i8, bf16, i16}}
  %l = fetch.table_lookup %s {fn = "gelu"} : !fetch.stream<main, [4], [32], f32> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// The output is bf16 only: widen with fetch.cast.
func.func @k(%a: memref<4x32xf8E4M3FN>, %o: memref<4x32xf32>) {
  %s = fetch.fetch %a : memref<4x32xf8E4M3FN> -> !fetch.stream<main, [4], [32], f8E4M3FN>
  // expected-error @+1 {{produces f32, but a function table produces bf16 only: make the result bf16 and widen it with fetch.cast afterwards (bf16 -> f32)}}
  %l = fetch.table_lookup %s {fn = "gelu"} : !fetch.stream<main, [4], [32], f8E4M3FN> -> !fetch.stream<main, [4], [32], f32>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], f32>, memref<4x32xf32>
  func.return
}

// -----

// scale on a float key.
func.func @k(%a: memref<4x32xf8E5M2>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xf8E5M2> -> !fetch.stream<main, [4], [32], f8E5M2>
  // expected-error @+1 {{'scale' applies only to integer keys (i8, i16); an f8E5M2 key's value is the number it encodes: drop it}}
  %l = fetch.table_lookup %s {fn = "gelu", scale = 2.0 : f32} : !fetch.stream<main, [4], [32], f8E5M2> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// scale and zero_point on a float key.
func.func @k(%a: memref<4x32xbf16>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xbf16> -> !fetch.stream<main, [4], [32], bf16>
  // expected-error @+1 {{'scale' and 'zero_point' apply only to integer keys (i8, i16); a bf16 key's value is the number it encodes: drop them}}
  %l = fetch.table_lookup %s {fn = "gelu", scale = 2.0 : f32, zero_point = 1 : i32} : !fetch.stream<main, [4], [32], bf16> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// A zero scale.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'scale' 0.0 is zero; it must be a finite, non-zero, normal f32}}
  %l = fetch.table_lookup %s {fn = "silu", scale = 0.0 : f32} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// A subnormal scale.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{is an f32 subnormal (RNGD has none); it must be a finite, non-zero, normal f32}}
  %l = fetch.table_lookup %s {fn = "silu", scale = 1.0e-40 : f32} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// A non-finite scale.
func.func @k(%a: memref<4x32xi16>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi16> -> !fetch.stream<main, [4], [32], i16>
  // expected-error @+1 {{'scale' inf is not finite; it must be a finite, non-zero, normal f32}}
  %l = fetch.table_lookup %s {fn = "silu", scale = 0x7F800000 : f32} : !fetch.stream<main, [4], [32], i16> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// scale must be f32.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'scale' must be an f32 float (scale = 0.0625 : f32)}}
  %l = fetch.table_lookup %s {fn = "silu", scale = 2.0 : f64} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// A zero point out of the key's range.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'zero_point' 128 is outside the i8 range [-128, 127]: it is a key value}}
  %l = fetch.table_lookup %s {fn = "silu", zero_point = 128 : i32} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// i16's range.
func.func @k(%a: memref<4x32xi16>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi16> -> !fetch.stream<main, [4], [32], i16>
  // expected-error @+1 {{'zero_point' -32769 is outside the i16 range [-32768, 32767]}}
  %l = fetch.table_lookup %s {fn = "silu", zero_point = -32769 : i32} : !fetch.stream<main, [4], [32], i16> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// zero_point must be i32.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'zero_point' must be an i32 integer (zero_point = 3 : i32)}}
  %l = fetch.table_lookup %s {fn = "silu", zero_point = 3 : i8} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// scale without fn.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{'scale' and 'zero_point' belong to function tables (hardware.md §2.1b): add fn, e.g. {fn = "identity"} to dequantise an integer key, or drop them}}
  %l = fetch.table_lookup %s {scale = 2.0 : f32} : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// An integer key without fn says to add one.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<main, [4], [32], i8>
  // expected-error @+1 {{has no i8 -> bf16 table; there is no decode table keyed by i8 (tables exist for f4E2M1FN -> f8E4M3FN/f8E5M2, paired, and f8E4M3FN/f8E5M2 -> bf16); a table keyed by i8 is a function table: add fn (one of identity, relu, gelu, gelu_tanh, sigmoid, silu, tanh, exp)}}
  %l = fetch.table_lookup %s : !fetch.stream<main, [4], [32], i8> -> !fetch.stream<main, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<main, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

// -----

// A function table on the sub unit: no table register.
func.func @k(%a: memref<4x32xi8>, %o: memref<4x32xbf16>) {
  %s = fetch.fetch %a : memref<4x32xi8> -> !fetch.stream<sub, [4], [32], i8>
  // expected-error @+1 {{runs on the sub Fetch Unit, which has no table-lookup register}}
  %l = fetch.table_lookup %s {fn = "silu"} : !fetch.stream<sub, [4], [32], i8> -> !fetch.stream<sub, [4], [32], bf16>
  rngd.commit %l, %o : !fetch.stream<sub, [4], [32], bf16>, memref<4x32xbf16>
  func.return
}

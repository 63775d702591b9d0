// Messages that xDSL gives in its own words come out in fetchc's: located,
// naming the op, saying the fix (ir.md §3: an error names the op and is worded
// so that a kernel writer knows the fix).
//
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// An unregistered op close to a registered one: did you mean ...?
func.func @typo(%a: memref<64x16xf8E5M2>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %a : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  // expected-error @+1 {{Operation fetch.cnvert is not registered; did you mean 'fetch.convert'?}}
  %b = fetch.cnvert %s : !fetch.stream<main, [64], [16], f8E5M2> -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %b, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

// -----

// Also with a typo in the dialect, and in the generic form.
func.func @typo_dialect(%a: memref<64x16xf8E5M2>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %a : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  // expected-error @+1 {{Operation rngd.comit is not registered; did you mean 'rngd.commit'?}}
  "rngd.comit"(%s, %o) : (!fetch.stream<main, [64], [16], f8E5M2>, memref<64x16xbf16>) -> ()
  func.return
}

// -----

func.func @typo_far(%a: memref<64x16xf8E5M2>) {
  // expected-error-re @+1 {{Operation fech.fetch is not registered; did you mean 'fetch.fetch'?{{$}}}}
  %s = fech.fetch %a : memref<64x16xf8E5M2> -> !fetch.stream<main, [64], [16], f8E5M2>
  func.return
}

// -----

// Nothing close: no suggestion.
func.func @unknown(%a: memref<64x16xf8E5M2>) {
  // expected-error-re @+1 {{Operation fetch.gather is not registered{{$}}}}
  "fetch.gather"(%a) : (memref<64x16xf8E5M2>) -> ()
  func.return
}

// -----

// A function body that does not end with func.return.
func.func @no_return(%a: memref<64x16xbf16>, %o: memref<64x16xbf16>) {
  %s = fetch.fetch %a : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  // expected-error @+1 {{'rngd.commit' op is the last op of the body of func @no_return, but a function body must end with func.return: add 'func.return' after it}}
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
}

// -----

func.func @no_return_with_result(%a: memref<64x16xbf16>) -> !rngd.trf<bf16> {
  %s = fetch.fetch %a : memref<64x16xbf16> -> !fetch.stream<main, [64], [16], bf16>
  // expected-error @+1 {{'rngd.to_trf' op is the last op of the body of func @no_return_with_result, but a function body must end with func.return: add 'func.return %v : !rngd.trf<bf16>' after it}}
  %t = rngd.to_trf %s : !fetch.stream<main, [64], [16], bf16> -> !rngd.trf<bf16>
}

// -----

// fetch.dequant without its format: the formats, and the one the scale type implies.
func.func @no_format(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %g: f32, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op needs its 'format' property: {format = "nvfp4"} (one f8E4M3FN block scale per 16 codes, an f32 tensor scale) or {format = "mxfp4"} (one f8E8M0FNU block scale per 32 codes, no tensor scale); its block scales are f8E4M3FN, so {format = "nvfp4"}}}
  %x = fetch.dequant %s, %bs, %g : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, f32 -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %x, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @no_format_mx(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x1xf8E8M0FNU>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{its block scales are f8E8M0FNU, so {format = "mxfp4"}}}
  %x = "fetch.dequant"(%s, %bs) : (!fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x1xf8E8M0FNU>) -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %x, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// An NVFP4 tensor scale given as a memref: named op, and the scale is an f32 scalar.
func.func @memref_scale(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %g: memref<1xf32>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op its tensor scale (the third operand) is memref<1xf32>, but the nvfp4 tensor scale is one f32 value: pass it as an f32 scalar argument of the function (%g: f32) or an arith.constant, not a memref}}
  %x = fetch.dequant %s, %bs, %g {format = "nvfp4"} : !fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, memref<1xf32> -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %x, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

func.func @memref_scale_generic(%w: memref<64x32xf4E2M1FN>, %bs: memref<64x2xf8E4M3FN>, %g: memref<1xf32>, %o: memref<64x32xf32>) {
  %s = fetch.fetch %w : memref<64x32xf4E2M1FN> -> !fetch.stream<main, [64], [32], f4E2M1FN>
  // expected-error @+1 {{'fetch.dequant' op its tensor scale (the third operand) is memref<1xf32>, but the nvfp4 tensor scale is one f32 value}}
  %x = "fetch.dequant"(%s, %bs, %g) <{format = "nvfp4"}> : (!fetch.stream<main, [64], [32], f4E2M1FN>, memref<64x2xf8E4M3FN>, memref<1xf32>) -> !fetch.stream<main, [64], [32], f32>
  rngd.commit %x, %o : !fetch.stream<main, [64], [32], f32>, memref<64x32xf32>
  func.return
}

// -----

// An operand of the wrong kind: named op and operand, one line.
func.func @wrong_operand(%x: f32, %o: memref<64x16xbf16>) {
  // expected-error @+1 {{'fetch.fetch' op its operand 'source' (#0) is f32, but must be memref}}
  %s = "fetch.fetch"(%x) : (f32) -> !fetch.stream<main, [64], [16], bf16>
  "rngd.commit"(%s, %o) : (!fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>) -> ()
  func.return
}

// -----

// The same in the custom form, where xDSL checks the types while parsing.
func.func @wrong_operand_custom(%x: f32, %o: memref<64x16xbf16>) {
  // expected-error @+1 {{'fetch.fetch' op expects a memref where its type signature has f32}}
  %s = fetch.fetch %x : f32 -> !fetch.stream<main, [64], [16], bf16>
  rngd.commit %s, %o : !fetch.stream<main, [64], [16], bf16>, memref<64x16xbf16>
  func.return
}

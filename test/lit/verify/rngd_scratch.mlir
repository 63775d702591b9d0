// rngd.scratch: a row-major DM buffer the compiler owns (ir.md §2a; made by
// fetch-route-sub-decode).  Its verifier: it sits in a func.func's entry
// block, holds an element type the Fetch Unit reads, has a static shape and no
// layout, a dm_base that is a DM byte address, and only fetch.fetch,
// fetch.dequant (block scales), rngd.commit and fetch_seq.program use it.
// RUN: %fetchc --split-input-file --verify-diagnostics -p '' %s

// Valid, with and without its placement; the custom form round-trips.
func.func @valid(%a: memref<4x16xi8>) -> !rngd.trf<i8> {
  %b = rngd.scratch : memref<4x16xi8>
  %c = rngd.scratch {dm_base = 64 : i64} : memref<2x2xf32>
  %s = fetch.fetch %a : memref<4x16xi8> -> !fetch.stream<main, [4], [16], i8>
  rngd.commit %s, %b : !fetch.stream<main, [4], [16], i8>, memref<4x16xi8>
  %t = fetch.fetch %b : memref<4x16xi8> -> !fetch.stream<sub, [4], [16], i8>
  %r = rngd.to_trf %t : !fetch.stream<sub, [4], [16], i8> -> !rngd.trf<i8>
  func.return %r : !rngd.trf<i8>
}

// -----

func.func @f16() {
  // expected-error @+1 {{'rngd.scratch' op is a memref of f16, which has no DM layout: a scratch buffer holds an element type the Fetch Unit reads}}
  %b = rngd.scratch : memref<4x16xf16>
  func.return
}

// -----

func.func @in_flight() {
  // expected-error @+1 {{'rngd.scratch' op is a memref of i9, which has no DM layout}}
  %b = rngd.scratch : memref<4x16xi9>
  func.return
}

// -----

func.func @dynamic() {
  // expected-error @+1 {{'rngd.scratch' op has a dynamic shape: a scratch buffer has a static shape}}
  %b = rngd.scratch : memref<?x16xi8>
  func.return
}

// -----

func.func @strided() {
  // expected-error @+1 {{'rngd.scratch' op has a layout or memory space attribute: a scratch buffer is a plain row-major memref}}
  %b = rngd.scratch : memref<4x16xi8, strided<[32, 1]>>
  func.return
}

// -----

func.func @unaligned() {
  // expected-error @+1 {{'rngd.scratch' op dm_base 12 is not a multiple of 8 bytes}}
  %b = rngd.scratch {dm_base = 12 : i64} : memref<4x16xi8>
  func.return
}

// -----

func.func @in_region(%p: i1) {
  scf.if %p {
    // expected-error @+1 {{'rngd.scratch' op is inside 'scf.if': a scratch buffer belongs to a kernel and sits directly in the entry block of its func.func}}
    %b = rngd.scratch : memref<4x16xi8>
  }
  func.return
}

// -----

func.func @escapes() -> memref<4x16xi8> {
  // expected-error @+1 {{'rngd.scratch' op is used by 'func.return': a scratch buffer is the compiler's own DM tensor, read by fetch.fetch (or fetch.dequant's block scales) and written by rngd.commit}}
  %b = rngd.scratch : memref<4x16xi8>
  func.return %b : memref<4x16xi8> // expected-note {{used here}}
}

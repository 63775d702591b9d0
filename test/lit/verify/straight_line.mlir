// ir.md §2a: a Fetch Unit program is a static register block, so every
// fetch.fetch sits directly in the entry block of a func.func.  A fetch in a
// loop, a conditional, any other region or a later block is an error at the
// fetch naming the enclosing op and the fix; nothing is dropped silently.
// RUN: %fetchc %s --split-input-file --verify-diagnostics -p ''

func.func @in_if(%a: memref<64x32xi8>, %o: memref<64x32xi8>, %c: i1) {
  scf.if %c {
    // expected-error @+1 {{'fetch.fetch' op is inside 'scf.if', but a Fetch Unit program is a static register block that runs exactly once: every fetch.fetch must sit directly in a func.func body; unroll the 'scf.if' or hoist the fetch out of it}}
    %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
    rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  }
  func.return
}

// -----

func.func @in_affine_for(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
  affine.for %i = 0 to 4 {
    // expected-error @+1 {{'fetch.fetch' op is inside 'affine.for'}}
    %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
    rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  }
  func.return
}

// -----

func.func @in_a_region(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
  scf.execute_region {
    // expected-error @+1 {{'fetch.fetch' op is inside 'scf.execute_region'}}
    %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
    rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
    scf.yield
  }
  func.return
}

// -----

func.func @in_a_later_block(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
  cf.br ^next
^next:
  // expected-error @+1 {{'fetch.fetch' op is not in the entry block of its func.func, so whether it runs depends on control flow, but a Fetch Unit program is a static register block that runs exactly once; move it to the entry block}}
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

// -----

// Straight-line: two kernels, fetches directly in the body.
func.func @fine(%a: memref<64x32xi8>, %o: memref<64x32xi8>) {
  %s = fetch.fetch %a : memref<64x32xi8> -> !fetch.stream<main, [64], [32], i8>
  rngd.commit %s, %o : !fetch.stream<main, [64], [32], i8>, memref<64x32xi8>
  func.return
}

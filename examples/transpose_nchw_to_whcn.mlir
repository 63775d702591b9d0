// Transposing read: NCHW -> WHCN
// ==============================
//
// The Fetch Sequencer example of the furiosa-opt book (hardware.md §3): a
// bf16 feature map of N=4 images, C=3 channels, H=8 x W=8 pixels, stored
// NCHW, read in W, H, C, N order (W outermost, N innermost), one element per
// packet.  No adapter stage; the stream is committed as a WHCN tensor.
//
// The map sends the stream's time dims (w, h, c, n) and its one-element
// packet dim e to the memref's (n, c, h, w) indices.  Row-major NCHW strides
// are (192, 64, 8, 1) elements, so the loop nest is
//
//   [8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1
//
// No entry merges (each outer stride differs from inner size x inner
// stride); with a one-element packet the innermost entry need not be
// contiguous.  Each read is one bf16 (fetch_size 2), 768 reads in all.
//
//   DM address  size     tensor
//   0x00000000  1.5 KiB  x  feature map  memref<4x3x8x8xbf16> (NCHW)
//   0x00000600  1.5 KiB  y  WHCN copy    memref<8x8x3x4xbf16> (the commit's destination)
//
// fetch-place-dm places the arguments in order, each at the next 64-byte
// boundary after the previous one (ir.md §2a); no address is written here.
//
// Compile:  fetchc transpose_nchw_to_whcn.mlir -o t.bin && fetchc dis t.bin
//
//   program 0 "nchw_to_whcn/0": main, bf16 -> bf16, base 0x0,
//     [8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1, fetch_size 2, 1 word per
//     packet, no stages, flit_count 1.

func.func @nchw_to_whcn(%x: memref<4x3x8x8xbf16>, %y: memref<8x8x3x4xbf16>) {
  %s = fetch.fetch %x {map = affine_map<(w, h, c, n, e) -> (n, c, h, w + e)>}
      : memref<4x3x8x8xbf16> -> !fetch.stream<main, [8, 8, 3, 4], [1], bf16>
  rngd.commit %s, %y : !fetch.stream<main, [8, 8, 3, 4], [1], bf16>, memref<8x8x3x4xbf16>
  func.return
}

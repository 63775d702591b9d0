// Tiling read: one 64 x 128 tile of a 256 x 512 bf16 matrix
// =========================================================
//
// A GEMM kernel walks a large matrix tile by tile.  This reads the tile at
// rows 128..191, columns 256..383 of a row-major 256 x 512 bf16 matrix
// stored at DM 0x00010000 (256 KiB of one slice's 512 KiB), two equivalent
// ways:
//
//   @tile_strided  the tile as a strided<> view: memref<64x128xbf16,
//                  strided<[512, 1], offset: 65792>> (65792 = 128*512 + 256
//                  elements) over the matrix's base address;
//   @tile_map      the whole matrix memref<256x512xbf16> with the tile
//                  origin as constant terms of the map:
//                  (r, p, e) -> (r + 128, p * 32 + e + 256).
//
// Both kernels say where the matrix lives with the argument attribute
// rngd.dm_base (ir.md §2a): the address of the memref's element 0, here the
// matrix's first byte, 0x00010000, also for the strided view (its offset is
// counted from that base).  The fetches then carry no base of their own.
//
// Base folding: the program's base is the matrix base plus the element
// offset of the first element read, in bytes: 0x10000 + 65792 * 2 =
// 0x30200 in both cases; the loop nest no longer carries the offset.
// Each tile row is 4 packets of 32 elements, which merge into one 128-element
// entry; rows are 512 elements apart, so they do not merge:
//
//   [64 : 512, 128 : 1] : 32
//
// A packet of 32 bf16 is 64 bytes; the largest legal read is 32 bytes
// (16 elements), so 2 words per packet, 2 flits per packet.
//
//   DM address  size     tensor
//   0x00010000  256 KiB  the matrix, memref<256x512xbf16> (%m; %tile views it)
//   0x00050000  16 KiB   out  the tile copy, memref<64x128xbf16> (the commit's
//                        destination)
//
// @tile_map's %out needs no address: fetch-place-dm puts it at the next
// 64-byte boundary after the highest byte taken, the matrix's end, 0x50000.
// @tile_strided's %out gets an explicit one too, because its kernel only sees
// the view: the view's bytes end at 0x3feff (row 191, column 383), so the
// pass would place %out at 0x3ff00, over rows 192.. of the matrix, which the
// view does not cover.  (Explicitly placed tensors may overlap; the pass only
// promises not to place a tensor over the bytes of another argument.)
//
// Compile:  fetchc tiling_read.mlir -o tile.bin && fetchc dis tile.bin
//
//   program 0 "tile_strided/0" and program 1 "tile_map/0": main,
//     bf16 -> bf16, base 0x30200, [64 : 512, 128 : 1] : 32, fetch_size 32,
//     words_per_packet 2, no stages, flit_count 2.

func.func @tile_strided(%tile: memref<64x128xbf16, strided<[512, 1], offset: 65792>>
                            {rngd.dm_base = 65536 : i64},
                        %out: memref<64x128xbf16> {rngd.dm_base = 327680 : i64}) {
  %s = fetch.fetch %tile {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<64x128xbf16, strided<[512, 1], offset: 65792>> -> !fetch.stream<main, [64, 4], [32], bf16>
  rngd.commit %s, %out : !fetch.stream<main, [64, 4], [32], bf16>, memref<64x128xbf16>
  func.return
}

func.func @tile_map(%m: memref<256x512xbf16> {rngd.dm_base = 65536 : i64},
                    %out: memref<64x128xbf16>) {
  %s = fetch.fetch %m {map = affine_map<(r, p, e) -> (r + 128, p * 32 + e + 256)>}
      : memref<256x512xbf16> -> !fetch.stream<main, [64, 4], [32], bf16>
  rngd.commit %s, %out : !fetch.stream<main, [64, 4], [32], bf16>, memref<64x128xbf16>
  func.return
}

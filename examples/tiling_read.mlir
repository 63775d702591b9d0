// Tiling read: one 64 x 128 tile of a 1024 x 1024 bf16 matrix
// ===========================================================
//
// A GEMM kernel walks a large matrix tile by tile.  This reads the tile at
// rows 256..319, columns 384..511 of a row-major 1024 x 1024 bf16 matrix
// stored at DM 0x00800000 (2 MiB), two equivalent ways:
//
//   @tile_strided  the tile as a strided<> view: memref<64x128xbf16,
//                  strided<[1024, 1], offset: 262528>> (262528 = 256*1024 + 384
//                  elements) over the matrix's base address;
//   @tile_map      the whole matrix memref<1024x1024xbf16> with the tile
//                  origin as constant terms of the map:
//                  (r, p, e) -> (r + 256, p * 32 + e + 384).
//
// Both kernels say where the matrix lives with the argument attribute
// rngd.dm_base (ir.md §2a): the address of the memref's element 0, here the
// matrix's first byte, 0x00800000, also for the strided view (its offset is
// counted from that base).  The fetches then carry no base of their own.
//
// Base folding: the program's base is the matrix base plus the element
// offset of the first element read, in bytes: 0x800000 + 262528 * 2 =
// 0x880300 in both cases; the loop nest no longer carries the offset.
// Each tile row is 4 packets of 32 elements, which merge into one 128-element
// entry; rows are 1024 elements apart, so they do not merge:
//
//   [64 : 1024, 128 : 1] : 32
//
// A packet of 32 bf16 is 64 bytes; the largest legal read is 32 bytes
// (16 elements), so 2 words per packet, 2 flits per packet.
//
//   DM address  size    tensor
//   0x00800000  2 MiB   the matrix, memref<1024x1024xbf16> (%m; %tile views it)
//   0x00a00000  16 KiB  out  the tile copy, memref<64x128xbf16> (the commit's
//                       destination)
//
// @tile_map's %out needs no address: fetch-place-dm puts it at the next
// 64-byte boundary after the highest byte taken, the matrix's end, 0xa00000.
// @tile_strided's %out gets an explicit one too, because its kernel only sees
// the view: the view's bytes end at 0x89fbff (row 319, column 511), so the
// pass would place %out at 0x89fc00, over rows 320.. of the matrix, which the
// view does not cover.  (Explicitly placed tensors may overlap; the pass only
// promises not to place a tensor over the bytes of another argument.)
//
// Compile:  fetchc tiling_read.mlir -o tile.bin && fetchc dis tile.bin
//
//   program 0 "tile_strided/0" and program 1 "tile_map/0": main,
//     bf16 -> bf16, base 0x880300, [64 : 1024, 128 : 1] : 32, fetch_size 32,
//     words_per_packet 2, no stages, flit_count 2.

func.func @tile_strided(%tile: memref<64x128xbf16, strided<[1024, 1], offset: 262528>>
                            {rngd.dm_base = 8388608 : i64},
                        %out: memref<64x128xbf16> {rngd.dm_base = 10485760 : i64}) {
  %s = fetch.fetch %tile {map = affine_map<(r, p, e) -> (r, p * 32 + e)>}
      : memref<64x128xbf16, strided<[1024, 1], offset: 262528>> -> !fetch.stream<main, [64, 4], [32], bf16>
  rngd.commit %s, %out : !fetch.stream<main, [64, 4], [32], bf16>, memref<64x128xbf16>
  func.return
}

func.func @tile_map(%m: memref<1024x1024xbf16> {rngd.dm_base = 8388608 : i64},
                    %out: memref<64x128xbf16>) {
  %s = fetch.fetch %m {map = affine_map<(r, p, e) -> (r + 256, p * 32 + e + 384)>}
      : memref<1024x1024xbf16> -> !fetch.stream<main, [64, 4], [32], bf16>
  rngd.commit %s, %out : !fetch.stream<main, [64, 4], [32], bf16>, memref<64x128xbf16>
  func.return
}

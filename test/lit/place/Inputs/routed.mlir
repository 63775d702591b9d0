// A routed decode (fetch-route-sub-decode): %w (80 bytes) at 0x0, %o (640
// bytes) at 0x80, the scratch buffer (160 bytes) at 0x300, so the kernel needs
// 0x300 + 160 = 928 bytes.  Used by scratch-dm-size.test.
func.func @routed(%w: memref<10x16xf4E2M1FN>, %o: memref<10x16xf32>) {
  %s = fetch.fetch %w : memref<10x16xf4E2M1FN> -> !fetch.stream<sub, [10], [16], f4E2M1FN>
  %d = fetch.convert %s : !fetch.stream<sub, [10], [16], f4E2M1FN> -> !fetch.stream<sub, [10], [16], f32>
  rngd.commit %d, %o : !fetch.stream<sub, [10], [16], f32>, memref<10x16xf32>
  func.return
}

// No func.func here holds a fetch.fetch: no kernel.
func.func @helper(%a: memref<4xi8>) {
  func.return
}

func.func @f(%m: memref<16x16xi8>) {
  %x = "test.op"() {base = 4096 : i6499999999999999999999999999999999} : () -> ()
  func.return
}

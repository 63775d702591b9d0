func.func @f() {
  "fetch.fetchx"() : () -> ()
  func.return
}

func.func @f() attributes {a = dense<1> : tensor<100000000000xi8>} {
  func.return
}

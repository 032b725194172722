func.func @f() {
  func.return
}
func.func @g() {
  func.return
}

// An IR file may not call into the process: a declared function that is not irgrad's runtime,
// libc's memory functions or libm is a located error (exit 1, no traceback), unless the user
// passes --allow-external-calls. (`labs` here; `system` would be the attack.)
// RUN: not irgrad-run %s --backend cpu 2>&1 | filecheck %s --check-prefix=REFUSED
// RUN: sh -c 'irgrad-run %s --backend cpu >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: irgrad-run %s --backend cpu --allow-external-calls | filecheck %s --check-prefix=ALLOWED
// REFUSED: external-calls.mlir:[[# @LINE + 6]]:1: error: declares the external function @labs, which is not one of irgrad's runtime functions
// REFUSED-NOT: Traceback
// EXIT: exit=1
// ALLOWED: 7
// A libm function (what nn ops lower to) is always allowed: see basic.mlir's exp and tanh.

func.func private @labs(i64) -> i64
func.func @main() -> i64 {
  %x = arith.constant -7 : i64
  %y = func.call @labs(%x) : (i64) -> i64
  func.return %y : i64
}

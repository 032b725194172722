// RUN: not irgrad-opt -p no-such-pass %s 2>&1 | filecheck %s
// RUN: not irgrad-opt -p cse,canonicalise %s 2>&1 | filecheck %s --check-prefix=HINT
// RUN: sh -c 'irgrad-opt -p no-such-pass %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// An unknown pass is a command-line error, with a suggestion when one is close.

func.func @f() {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: irgrad-opt: error: unknown pass 'no-such-pass'
// CHECK-NOT: Traceback

// HINT: irgrad-opt: error: unknown pass 'canonicalise'; did you mean 'canonicalize'?

// EXIT: exit=1

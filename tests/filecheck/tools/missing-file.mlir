// RUN: not irgrad-opt %s.does-not-exist 2>&1 | filecheck %s
// RUN: sh -c 'irgrad-opt %s.does-not-exist >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// A missing input file is reported, not raised.

// CHECK-NOT: Traceback
// CHECK: irgrad-opt: error: could not open input file '{{.*}}missing-file.mlir.does-not-exist': No such file or directory
// CHECK-NOT: Traceback

// EXIT: exit=1

// RUN: python -c "import numpy as np; np.save('%t.a.npy', np.array([7, 8], np.int32)); np.save('%t.b.npy', np.array([2, 0], np.int32)); np.save('%t.one.npy', np.array([1, 1], np.int32))"
// RUN: not irgrad-run %s --input %t.a.npy --input %t.b.npy 2>&1 | filecheck %s
// RUN: irgrad-run %s --input %t.a.npy --input %t.one.npy | filecheck %s --check-prefix=OK

// arith.divsi by zero is undefined behaviour: the interpreter reports it at the op, with
// the source line, rather than inventing a value.

func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %q = arith.divsi %a, %b : tensor<2xi32>
  func.return %q : tensor<2xi32>
}

// CHECK-NOT:  Traceback
// CHECK:      {{.*}}undefined-behaviour.mlir:9:3: error: 'arith.divsi' op division by zero is undefined behaviour
// CHECK-NEXT:   %q = arith.divsi %a, %b : tensor<2xi32>
// CHECK-NEXT: {{^}}  ^
// OK: [7 8]

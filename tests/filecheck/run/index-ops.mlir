// RUN: python -c "import numpy as np; np.save('%t.a.npy', np.array(-7)); np.save('%t.b.npy', np.array(2))"
// RUN: irgrad-run %s --backend interp --input %t.a.npy --input %t.b.npy | filecheck %s
// RUN: irgrad-run %s --backend cpu --input %t.a.npy --input %t.b.npy | filecheck %s
// RUN: irgrad-opt %s -p irgrad-cpu --verify-each=numeric | filecheck %s --check-prefix=NUMERIC

// index ops run on the reference interpreter and, through convert-index-to-llvm, compiled:
// floor/ceil division and remainder of -7 by 2, the unsigned max (-7 is 2**64 - 7), a
// signed comparison, a sign-extending cast, sizeof. The divisor is max(b, 1), so that
// --verify-each=numeric's random arguments (0 or 1) never divide by zero.

func.func @main(%a: index, %b: index) -> (index, index, index, index, i1, i64, index) {
  %one = index.constant 1
  %d = index.maxs %b, %one
  %0 = index.floordivs %a, %d
  %1 = index.ceildivs %a, %d
  %2 = index.rems %a, %d
  %3 = index.maxu %a, %b
  %4 = index.cmp slt(%a, %b)
  %5 = index.casts %a : index to i64
  %6 = index.sizeof
  func.return %0, %1, %2, %3, %4, %5, %6 : index, index, index, index, i1, i64, index
}

// CHECK:      {{^}}-4{{$}}
// CHECK-NEXT: {{^}}-3{{$}}
// CHECK-NEXT: {{^}}-1{{$}}
// CHECK-NEXT: {{^}}-7{{$}}
// CHECK-NEXT: {{^}}True{{$}}
// CHECK-NEXT: {{^}}-7{{$}}
// CHECK-NEXT: {{^}}64{{$}}

// --verify-each=numeric runs @main on the interpreter, then compiled once it is llvm: the
// same results for its random arguments.
// NUMERIC: llvm.func @main(

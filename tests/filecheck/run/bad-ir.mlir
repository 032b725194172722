// RUN: not irgrad-run %s.does-not-exist 2>&1 | filecheck %s --check-prefix=FILE
// RUN: not irgrad-run %S/inputs/syntax-error.mlir 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not irgrad-run %S/inputs/verify-error.mlir 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not irgrad-run %S/inputs/two-functions.mlir 2>&1 | filecheck %s --check-prefix=ENTRY

// A missing file, a syntax error and a verifier error are located diagnostics (exit 1);
// without @main, a module of several functions needs --entry.

// FILE-NOT: Traceback
// FILE:     irgrad-run: error: could not open input file '{{.*}}bad-ir.mlir.does-not-exist': No such file or directory

// SYNTAX-NOT:  Traceback
// SYNTAX:      {{.*}}syntax-error.mlir:2:22: error: Operation nn.frobnicate is not registered
// SYNTAX-NEXT:   %y = nn.frobnicate %x : tensor<2xf32>

// VERIFY-NOT:  Traceback
// VERIFY:      {{.*}}verify-error.mlir:2:3: error: 'nn.matmul' op contracting dimensions differ: lhs 2x3, rhs 2x3
// VERIFY-NEXT:   %y = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// VERIFY-NEXT: {{^}}  ^

// ENTRY: irgrad-run: error: no @main and several functions (@f, @g); choose one with --entry

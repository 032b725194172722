// Deeply nested input is a located error (exit 1), never Python's RecursionError: operations
// nested past MAX_OP_NESTING (64), and attributes or types nested past the parser's stack.
// RUN: python -c "n = 150; print('func.func @f() {\n' + '  scf.execute_region {\n' * n + '  scf.yield\n  }\n' * n + '  func.return\n}')" > %t.ops.mlir
// RUN: not irgrad-opt %t.ops.mlir 2>&1 | filecheck %s --check-prefix=OPS
// RUN: python -c "print('func.func @f() attributes {a = ' + '{b = ' * 300 + '1' + '}' * 300 + '} {\n  func.return\n}')" > %t.attrs.mlir
// RUN: not irgrad-opt %t.attrs.mlir 2>&1 | filecheck %s --check-prefix=ATTRS
// RUN: python -c "print('func.func @f() -> ' + '(' * 300 + 'i32' + ')' * 300 + ' {\n  func.return\n}')" > %t.types.mlir
// RUN: not irgrad-opt %t.types.mlir 2>&1 | filecheck %s --check-prefix=ATTRS
// RUN: python -c "n = 60; print('func.func @f() {\n' + '  scf.execute_region {\n' * n + '  scf.yield\n  }\n' * n + '  func.return\n}')" > %t.ok.mlir
// RUN: irgrad-opt %t.ok.mlir -p canonicalize,cse | filecheck %s --check-prefix=OK
// OPS: ops.mlir:65:3: error: operations nested more than 64 deep (regions in regions)
// OPS-NOT: internal error
// ATTRS: mlir:1:{{[0-9]+}}: error: nested too deeply to parse
// ATTRS-NOT: internal error
// OK: func.func @f

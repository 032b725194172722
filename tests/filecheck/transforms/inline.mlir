// inline: calls of private single-block functions become their bodies (callees first), so
// that cse and dce see across what autodiff outlined. Public, recursive, multi-block and
// factorization-tagged functions stay calls; so do bodies above max_ops.
// RUN: irgrad-opt %s -p inline --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p inline,symbol-dce,cse,dce --split-input-file | filecheck %s --check-prefix=CLEAN
// RUN: irgrad-opt %s -p 'inline{max_ops=3}' --split-input-file | filecheck %s --check-prefix=SMALL
// RUN: not irgrad-opt %s -p 'inline{max_ops=-1}' 2>&1 | filecheck %s --check-prefix=ERR
// ERR-NOT: Traceback

// A call of a call: both inlined, the arguments bound, the results forwarded.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[E1:.*]] = nn.exp %x : tensor<4xf32>
// CHECK-NEXT:    %[[S1:.*]] = nn.add %[[E1]], %x : tensor<4xf32>
// CHECK-NEXT:    %[[E2:.*]] = nn.exp %x : tensor<4xf32>
// CHECK-NEXT:    %[[S2:.*]] = nn.add %[[E2]], %x : tensor<4xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.mul %[[S1]], %[[S2]] : tensor<4xf32>
// CHECK-NEXT:    func.return %[[C]], %[[S1]] : tensor<4xf32>, tensor<4xf32>
// After cse the two copies are one, and symbol-dce removes the functions no call is left to.
// CLEAN-LABEL: func.func @main
// CLEAN-NEXT:    %[[E:.*]] = nn.exp %x : tensor<4xf32>
// CLEAN-NEXT:    %[[S:.*]] = nn.add %[[E]], %x : tensor<4xf32>
// CLEAN-NEXT:    %[[C:.*]] = nn.mul %[[S]], %[[S]] : tensor<4xf32>
// CLEAN-NEXT:    func.return %[[C]], %[[S]] : tensor<4xf32>, tensor<4xf32>
// CLEAN-NOT:   func.func private
// With max_ops=3 the two-op @inner fits, @outer (a call to inline and a mul: 4 ops) does not.
// SMALL-LABEL: func.func @main
// SMALL-NEXT:    %0, %1 = func.call @outer(%x)
// SMALL-LABEL: func.func private @outer
// SMALL-NEXT:    nn.exp %y
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0, %1 = func.call @outer(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
func.func private @outer(%y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = func.call @inner(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %b = func.call @inner(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %c = nn.mul %a, %b : tensor<4xf32>
  func.return %c, %a : tensor<4xf32>, tensor<4xf32>
}
func.func private @inner(%z: tensor<4xf32>) -> tensor<4xf32> {
  %e = nn.exp %z : tensor<4xf32>
  %s = nn.add %e, %z : tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// Public callees, recursion and factorization-tagged functions are left as calls.
// CHECK-LABEL: func.func @calls
// CLEAN-LABEL: func.func @calls
// CHECK-NEXT:    func.call @public
// CHECK-NEXT:    func.call @recursive
// CHECK-NEXT:    nn.full
// CHECK-NEXT:    func.call @tagged
func.func @calls(%x: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2x2xf64>) {
  %0 = func.call @public(%x) : (tensor<2xf64>) -> tensor<2xf64>
  %1 = func.call @recursive(%x) : (tensor<2xf64>) -> tensor<2xf64>
  %m = nn.full 1.0 : tensor<2x2xf64>
  %2 = func.call @tagged(%m) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  func.return %0, %1, %2 : tensor<2xf64>, tensor<2xf64>, tensor<2x2xf64>
}
func.func @public(%x: tensor<2xf64>) -> tensor<2xf64> {
  func.return %x : tensor<2xf64>
}
func.func private @recursive(%x: tensor<2xf64>) -> tensor<2xf64> {
  %0 = func.call @recursive(%x) : (tensor<2xf64>) -> tensor<2xf64>
  func.return %0 : tensor<2xf64>
}
func.func private @tagged(%a: tensor<2x2xf64>) -> tensor<2x2xf64> attributes {irgrad.factorization = {kind = "potrf", lower = true, unit_diagonal = false}} {
  func.return %a : tensor<2x2xf64>
}

// A bad option is a clear error, not a traceback.
// ERR: max_ops must be at least 0, got -1

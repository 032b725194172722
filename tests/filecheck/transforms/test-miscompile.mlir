// RUN: irgrad-opt %s -p test-miscompile --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p test-miscompile,test-miscompile --split-input-file | filecheck %s --check-prefix=TWICE

// test-miscompile exists to be caught by --verify-each=numeric (tools/verify-each-numeric.mlir):
// it keeps the IR valid and changes only the numbers. nn.exp becomes nn.tanh ...
// CHECK-LABEL: func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = nn.tanh %x : tensor<4xf32>
// CHECK-NOT:     nn.exp
// TWICE-LABEL: func.func @exp
// TWICE-NEXT:    nn.tanh
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// ... llvm.fadd becomes llvm.fsub, and every other op is left as it is.
// CHECK-LABEL: llvm.func @add(%a: f32, %b: f32) -> f32
// CHECK-NEXT:    %{{.*}} = llvm.fsub %a, %b : f32
// CHECK-NEXT:    %{{.*}} = llvm.fmul
llvm.func @add(%a: f32, %b: f32) -> f32 {
  %c = llvm.fadd %a, %b : f32
  %d = llvm.fmul %c, %b : f32
  llvm.return %d : f32
}

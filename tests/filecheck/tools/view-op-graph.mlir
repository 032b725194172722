// RUN: irgrad-opt --view-op-graph %s | filecheck %s
// RUN: irgrad-opt %s -p autodiff,inline,symbol-dce,canonicalize,cse --view-op-graph='max-label-len=0 print-adjoint-edges=false' -o %t.dot
// RUN: filecheck %s --check-prefix=GRAD < %t.dot
// RUN: not irgrad-opt %s --view-op-graph='max-depth=many' 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not irgrad-opt %s --view-op-graph='output="g.dot"' 2>&1 | filecheck %s --check-prefix=OUTPUT
// RUN: not irgrad-opt %s --view-op-graph -t llvm 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not irgrad-opt %s --view-op-graf 2>&1 | filecheck %s --check-prefix=SPELLING

// `irgrad-opt --view-op-graph` prints the graph of the module the pipeline leaves, in Graphviz DOT,
// where the module would go: stdout (a bare flag leaves the next word the input file), or -o.
func.func private @f(%x: tensor<3xf32>) -> tensor<f32> {
  %xx = nn.mul %x, %x : tensor<3xf32>
  %s = nn.sin %x : tensor<3xf32>
  %z = nn.add %xx, %s : tensor<3xf32>
  %l = nn.reduce_sum %z axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %g = autodiff.grad @f(%x) wrt [0] : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}

// CHECK-NOT: func.func
// CHECK:     digraph "module" {
// CHECK:       label="@f";
// CHECK:       label="@main";
// CHECK:       [[X:v[0-9]+]] [label="%x\ntensor<3xf32>", shape=box, style=rounded];
// CHECK-NEXT:  [[REQ:v[0-9]+]] [label="autodiff.grad\ncallee: @f\nwrt: array<i64: 0>\ntensor<3xf32>"];
// CHECK-NEXT:  [[RET:v[0-9]+]] [label="return", shape=box];
// CHECK:       [[X]] -> [[REQ]];
// CHECK-NEXT:  [[REQ]] -> [[RET]];
// CHECK-NEXT: }

// After autodiff, a gradient alone: DCE dropped the forward sweep, so the adjoint cluster stands alone
// and each adjoint op says in its label which primal op it came from.
// GRAD:     label="@main";
// GRAD-NOT: label="primal";
// GRAD:     label="adjoint";
// GRAD:     [label="nn.broadcast_in_dim\ndims: array<i64>\ntensor<3xf32>\nadjoint of nn.reduce_sum"];
// GRAD:     [label="nn.cos\ntensor<3xf32>\nadjoint of nn.sin"];
// GRAD:     [label="nn.mul\ntensor<3xf32>\nadjoint of nn.mul"];
// GRAD-NOT: style=dashed, color

// TYPE: irgrad-opt: error: invalid options for pass 'view-op-graph': option 'max-depth' takes int, got 'many'
// OUTPUT: irgrad-opt: error: --view-op-graph writes the graph where the module would go: give the file with -o, not output=
// TARGET: irgrad-opt: error: --view-op-graph prints the graph instead of the module: drop -t llvm
// SPELLING: irgrad-opt: error: unrecognized arguments: --view-op-graf; did you mean --view-op-graph?

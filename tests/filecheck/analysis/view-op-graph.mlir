// RUN: irgrad-opt %s --split-input-file -p 'autodiff,inline,symbol-dce,canonicalize,cse,view-op-graph' 2>&1 >/dev/null | filecheck %s
// RUN: irgrad-opt %s --split-input-file -p view-op-graph 2>/dev/null | filecheck %s --check-prefix=IR
// RUN: irgrad-opt %s --split-input-file -p 'view-op-graph{max-depth=1 print-attrs=false max-label-len=8}' 2>&1 >/dev/null | filecheck %s --check-prefix=OPEN
// RUN: irgrad-opt %s --split-input-file -p 'view-op-graph{print-data-flow-edges=false print-control-flow-edges=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=CONTROL
// RUN: irgrad-opt %s -p 'view-op-graph{output="%t.dot"}' | filecheck %s --check-prefix=IR
// RUN: filecheck %s --check-prefix=FILE < %t.dot
// RUN: not irgrad-opt %s -p 'view-op-graph{max-label-len=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not irgrad-opt %s -p 'view-op-graph{max-lable-len=3}' 2>&1 | filecheck %s --check-prefix=SPELLING
// RUN: not irgrad-opt %s -p 'view-op-graph{output="%t.missing/g.dot"}' 2>&1 | filecheck %s --check-prefix=UNWRITABLE

// z = x*x + sin(x), summed, and its value_and_grad: after autodiff and inlining, the primal ops and the
// adjoint ops (the reverse sweep's, marked by their locations) stand in two clusters; every adjoint op
// has a dashed edge to the primal op it came from; the seed 1.0 belongs to the adjoint part.
func.func private @f(%x: tensor<3xf32>) -> tensor<f32> {
  %xx = nn.mul %x, %x : tensor<3xf32>
  %s = nn.sin %x : tensor<3xf32>
  %z = nn.add %xx, %s : tensor<3xf32>
  %l = nn.reduce_sum %z axes = [0] : tensor<3xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @main(%x: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %v, %g = autodiff.value_and_grad @f(%x) wrt [0] : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  func.return %v, %g : tensor<f32>, tensor<3xf32>
}

// CHECK:       digraph "module" {
// CHECK:         subgraph [[FN:cluster_[0-9]+]] {
// CHECK-NEXT:      label="@main";
// CHECK-NEXT:      [[X:v[0-9]+]] [label="%x\ntensor<3xf32>", shape=box, style=rounded];
// CHECK-NEXT:      [[RET:v[0-9]+]] [label="return", shape=box];
// CHECK-NEXT:      subgraph cluster_{{[0-9]+}} {
// CHECK-NEXT:        label="primal";
// CHECK:             [[MUL:v[0-9]+]] [label="nn.mul\ntensor<3xf32>"];
// CHECK-NEXT:        [[SIN:v[0-9]+]] [label="nn.sin\ntensor<3xf32>"];
// CHECK-NEXT:        [[ADD:v[0-9]+]] [label="nn.add\ntensor<3xf32>"];
// CHECK-NEXT:        [[SUM:v[0-9]+]] [label="nn.reduce_sum\naxes: array<i64: 0>\ntensor<f32>"];
// CHECK-NEXT:      }
// CHECK-NEXT:      subgraph cluster_{{[0-9]+}} {
// CHECK-NEXT:        label="adjoint";
// CHECK:             [[SEED:v[0-9]+]] [label="nn.full\nvalue: 1.000000e+00 : f32\ntensor<f32>"];
// CHECK-NEXT:        [[BCAST:v[0-9]+]] [label="nn.broadcast_in_dim\ndims: array<i64>\ntensor<3xf32>"];
// CHECK-NEXT:        [[COS:v[0-9]+]] [label="nn.cos\ntensor<3xf32>"];
// CHECK:           }
// CHECK-NEXT:    }
// x*x: two uses of x; the sum returned beside the gradient.
// CHECK:         [[X]] -> [[MUL]];
// CHECK-NEXT:    [[X]] -> [[MUL]];
// CHECK-NEXT:    [[X]] -> [[SIN]];
// CHECK-NEXT:    [[MUL]] -> [[ADD]];
// CHECK-NEXT:    [[SIN]] -> [[ADD]];
// CHECK-NEXT:    [[ADD]] -> [[SUM]];
// CHECK-NEXT:    [[SEED]] -> [[BCAST]];
// CHECK-NEXT:    [[X]] -> [[COS]];
// CHECK:         [[SUM]] -> [[RET]];
// The ties: adjoint op -> its primal op.
// CHECK:         [[BCAST]] -> [[SUM]] [style=dashed, color="{{.*}}", arrowhead=empty, constraint=false];
// CHECK-NEXT:    [[COS]] -> [[SIN]] [style=dashed,
// CHECK:         -> [[MUL]] [style=dashed,
// CHECK-NOT:     -> [[ADD]] [style=dashed
// CHECK:       }

// The pass changes nothing: the module still prints on stdout (or the DOT goes to output=).
// IR:      func.func private @f
// IR:      autodiff.value_and_grad @f
// FILE:    label="@main";
// FILE:    autodiff.value_and_grad

// -----

// A loop is one node that counts its body's ops, its captured %w an edge into it; with max-depth=1 it
// opens as a cluster of its body, where %w goes straight to its user.
func.func @loop(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %lb = arith.constant 0 : index
  %ub = arith.constant 5 : index
  %st = arith.constant 1 : index
  %r = scf.for %i = %lb to %ub step %st iter_args(%h = %x) -> (tensor<3xf32>) {
    %a = nn.mul %h, %w : tensor<3xf32>
    %t = nn.tanh %a : tensor<3xf32>
    scf.yield %t : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}

// CHECK:       label="@loop";
// CHECK-NOT:     label="primal"
// CHECK:         [[W:v[0-9]+]] [label="%w\ntensor<3xf32>", shape=box, style=rounded];
// CHECK:         [[FOR:v[0-9]+]] [label="scf.for\ntensor<3xf32>\nbody: 3 ops", shape=box3d];
// CHECK:         [[W]] -> [[FOR]];

// OPEN:        label="@loop";
// OPEN:          [[W:v[0-9]+]] [label="%w\ntensor<3...", shape=box, style=rounded];
// OPEN:          subgraph cluster_{{[0-9]+}} {
// OPEN-NEXT:       label="scf.for";
// OPEN-NEXT:       style=dashed;
// OPEN-NEXT:       v{{[0-9]+}} [label="scf.for\ntensor<3..."];
// OPEN-NEXT:       subgraph cluster_{{[0-9]+}} {
// OPEN-NEXT:         label="region #0";
// OPEN-NEXT:         style=dashed;
// OPEN-NEXT:         v{{[0-9]+}} [label="%i\nindex", shape=box, style=rounded];
// OPEN-NEXT:         [[H:v[0-9]+]] [label="%h\ntensor<3...", shape=box, style=rounded];
// OPEN-NEXT:         [[MUL:v[0-9]+]] [label="nn.mul\ntensor<3..."];
// OPEN-NEXT:         v{{[0-9]+}} [label="nn.tanh\ntensor<3..."];
// OPEN-NEXT:         v{{[0-9]+}} [label="scf.yield"];
// OPEN:          [[H]] -> [[MUL]];
// OPEN-NEXT:     [[W]] -> [[MUL]];

// -----

// Branches: control-flow edges (dashed) from each branch to the first node of its successor block,
// drawn as a cluster per block; without data-flow edges, no plain edge is left.
func.func @countdown(%n: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  cf.br ^bb1(%n : i32)
^bb1(%x: i32):
  %c = arith.cmpi sgt, %x, %c0 : i32
  cf.cond_br %c, ^bb2(%x : i32), ^bb3(%x : i32)
^bb2(%y: i32):
  %one = arith.constant 1 : i32
  %next = arith.subi %y, %one : i32
  cf.br ^bb1(%next : i32)
^bb3(%r: i32):
  func.return %r : i32
}

// CONTROL:      label="@countdown";
// CONTROL:        label="^bb0";
// CONTROL:        [[BR:v[0-9]+]] [label="cf.br"];
// CONTROL:        label="^bb1";
// CONTROL-NEXT:   style=dashed;
// CONTROL-NEXT:   [[BB1:v[0-9]+]] [label="%x\ni32", shape=box, style=rounded];
// CONTROL:        [[COND:v[0-9]+]] [label="cf.cond_br"];
// CONTROL:        label="^bb2";
// CONTROL-NEXT:   style=dashed;
// CONTROL-NEXT:   [[BB2:v[0-9]+]] [label="%y\ni32"
// CONTROL:        [[BACK:v[0-9]+]] [label="cf.br"];
// CONTROL:        label="^bb3";
// CONTROL-NEXT:   style=dashed;
// CONTROL-NEXT:   [[BB3:v[0-9]+]] [label="%r\ni32"
// CONTROL-NOT:  -> v{{[0-9]+}};
// CONTROL:      [[BR]] -> [[BB1]] [style=dashed];
// CONTROL-NEXT: [[COND]] -> [[BB2]] [style=dashed];
// CONTROL-NEXT: [[COND]] -> [[BB3]] [style=dashed];
// CONTROL-NEXT: [[BACK]] -> [[BB1]] [style=dashed];
// CONTROL-NEXT: }

// Bad options are command-line errors that name the option.
// NEGATIVE-NOT: Traceback
// NEGATIVE: irgrad-opt: error: invalid options for pass 'view-op-graph': option 'max-label-len' must be >= 0, got -1
// SPELLING: irgrad-opt: error: invalid options for pass 'view-op-graph': no such option 'max-lable-len' ({{.*}}); did you mean 'max-label-len'?
// UNWRITABLE-NOT: Traceback
// UNWRITABLE: view-op-graph: could not write '{{.*}}.missing/g.dot': No such file or directory

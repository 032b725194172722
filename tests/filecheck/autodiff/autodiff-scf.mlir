// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s

// Control flow: every region is outlined (@<f>_for_body, @<f>_if_then, ...), differentiated as a function,
// and called from control flow of the same shape. Numbers: tests/unit/autodiff/test_autodiff_control_flow.py.

// scf.for with constant bounds, reverse mode: the forward loop also writes the carried value entering
// iteration i at row i of a 5-row tape; the reverse loop runs k = 4, ..., 0, reads row k, and calls the
// body's VJP (which recomputes the iteration from it). %w, used inside, accumulates its cotangent as an
// extra iter_arg. Forward mode carries the tangent as an extra iter_arg.
func.func @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
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
func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y, %dx, %dw = autodiff.vjp @f(%x, %w) cotangents(%ct : tensor<3xf32>) wrt [0, 1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %dx, %dw : tensor<3xf32>, tensor<3xf32>
}
func.func @tangent(%x: tensor<3xf32>, %w: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %y, %t = autodiff.jvp @f(%x, %w) tangents(%v : tensor<3xf32>) wrt [1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %t : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[UB:.*]] = arith.constant 5 : index
// CHECK:         %[[EMPTY:.*]] = nn.full 0.0 : tensor<5x3xf32>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[R:.*]], %[[TAPE:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[UB]] step %{{.*}} iter_args(%[[H:.*]] = %[[X]], %[[T:.*]] = %[[EMPTY]]) -> (tensor<3xf32>, tensor<5x3xf32>) {
// CHECK-NEXT:      %[[A:.*]] = nn.mul %[[H]], %[[W]]
// CHECK-NEXT:      %[[TANH:.*]] = nn.tanh %[[A]]
// CHECK-NEXT:      %[[ROW:.*]] = nn.reshape %[[H]] : tensor<3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:      %[[T1:.*]] = nn.dynamic_update_slice %[[T]], %[[ROW]][%[[I]], %[[C0]]] : tensor<5x3xf32>, tensor<1x3xf32>, index, index
// CHECK-NEXT:      scf.yield %[[TANH]], %[[T1]]
// CHECK-NEXT:    }
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.subi %[[UB]], %[[ONE]] : index
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0.0 : tensor<3xf32>
// CHECK-NEXT:    %[[X_BAR:.*]], %[[W_BAR:.*]] = scf.for %[[J:.*]] = %[[C0]] to %[[UB]] step %[[ONE]] iter_args(%[[H_CT:.*]] = %[[CT]], %[[W_ACC:.*]] = %[[ZERO]])
// CHECK-NEXT:      %[[K:.*]] = arith.subi %[[LAST]], %[[J]] : index
// CHECK-NEXT:      %[[READ:.*]] = nn.dynamic_slice %[[TAPE]][%[[K]], %[[C0]]] sizes = [1, 3] : tensor<5x3xf32>, index, index -> tensor<1x3xf32>
// CHECK-NEXT:      %[[HK:.*]] = nn.reshape %[[READ]] : tensor<1x3xf32> -> tensor<3xf32>
// CHECK-NEXT:      %{{.*}}, %[[DH:.*]], %[[DW:.*]] = func.call @f_for_body_vjp(%[[K]], %[[HK]], %[[W]], %[[H_CT]])
// CHECK-NEXT:      %[[W_ACC1:.*]] = nn.add %[[W_ACC]], %[[DW]]
// CHECK-NEXT:      scf.yield %[[DH]], %[[W_ACC1]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[X_BAR]], %[[W_BAR]]

// CHECK-LABEL: func.func private @f_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[W_DOT:.*]]: tensor<3xf32>)
// CHECK:         %[[ZERO:.*]] = nn.full 0.0 : tensor<3xf32>
// CHECK-NEXT:    %[[R:.*]], %[[R_DOT:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[H:.*]] = %[[X]], %[[H_DOT:.*]] = %[[ZERO]]) -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:      %[[NEXT:.*]], %[[NEXT_DOT:.*]] = func.call @f_for_body_jvp(%[[I]], %[[H]], %[[W]], %[[H_DOT]], %[[W_DOT]])
// CHECK-NEXT:      scf.yield %[[NEXT]], %[[NEXT_DOT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[R_DOT]]

// The body's VJP: the iteration recomputed from its carried value, then its reverse sweep.
// CHECK-LABEL: func.func private @f_for_body_vjp(
// CHECK-SAME:      %{{.*}}: index, %[[H:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[A:.*]] = nn.mul %[[H]], %[[W]]
// CHECK-NEXT:    nn.tanh %[[A]]
// CHECK:         func.return
// CHECK-LABEL: func.func private @f_for_body_jvp(
// The primal body itself is only differentiated, never called: the pass removes it.
// CHECK-NOT:   func.func private @f_for_body(
// CHECK-NOT:   autodiff.

// -----

// Dynamic bounds: no tape (its shape would be dynamic). The trip count is max(0, n) at run time, and
// iteration k's carried value is recomputed from the initial one by an inner loop of k steps of the body.
func.func @f(%x: tensor<3xf32>, %n: index) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %s = nn.sin %h : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %n: index, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @f(%x, %n) cotangents(%ct : tensor<3xf32>) wrt [0] : (tensor<3xf32>, index) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[N:.*]]: index, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = scf.for
// CHECK:         }
// CHECK-NOT:     nn.dynamic_update_slice
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[COUNT:.*]] = arith.maxsi %[[N]], %[[ZERO]] : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.subi %[[COUNT]], %[[ONE]]
// CHECK-NEXT:    %[[X_BAR:.*]] = scf.for %[[J:.*]] = %[[ZERO]] to %[[COUNT]] step %[[ONE]] iter_args(%[[H_CT:.*]] = %[[CT]])
// CHECK-NEXT:      %[[K:.*]] = arith.subi %[[LAST]], %[[J]]
// CHECK-NEXT:      %[[HK:.*]] = scf.for %[[I:.*]] = %[[ZERO]] to %[[K]] step %[[ONE]] iter_args(%[[H:.*]] = %[[X]])
// CHECK-NEXT:        %[[NEXT:.*]] = func.call @f_for_body(%[[I]], %[[H]])
// CHECK-NEXT:        scf.yield %[[NEXT]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %{{.*}}, %[[DH:.*]] = func.call @f_for_body_vjp(%[[K]], %[[HK]], %[[H_CT]])
// CHECK-NEXT:      scf.yield %[[DH]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[X_BAR]]
// CHECK-LABEL: func.func private @f_for_body(
// CHECK-LABEL: func.func private @f_for_body_vjp(

// -----

// A loop that runs 0 times is the identity on its carried values: the cotangent passes through.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c0 step %c1 iter_args(%h = %x) -> (tensor<3xf32>) {
    %s = nn.sin %h : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @f(%x) cotangents(%ct : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %{{.*}}: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = scf.for
// CHECK:         }
// CHECK-NEXT:    func.return %[[R]], %[[CT]]
// CHECK-NOT:   @f_for_body

// -----

// acc <- acc + exp(w): the body's VJP reads no carried value, so there is no tape; the reverse loop passes
// the initial value as a placeholder and accumulates w's cotangent.
func.func @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %x) -> (tensor<3xf32>) {
    %e = nn.exp %w : tensor<3xf32>
    %s = nn.add %acc, %e : tensor<3xf32>
    scf.yield %s : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %w: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %y, %dx, %dw = autodiff.vjp @f(%x, %w) cotangents(%ct : tensor<3xf32>) wrt [0, 1] : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %dx, %dw : tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK-NOT:     nn.dynamic_update_slice
// CHECK-NOT:     nn.dynamic_slice
// CHECK:         scf.for {{.*}} iter_args(%[[H_CT:.*]] = %[[CT]], %{{.*}} = %{{.*}})
// CHECK-NEXT:      %[[K:.*]] = arith.subi
// CHECK-NEXT:      func.call @f_for_body_vjp(%[[K]], %[[X]], %[[W]], %[[H_CT]])

// -----

// Scalar carried values and an i32 induction variable from 1 by 2: the tape is a tensor<4xf64> written
// with tensor.insert at (i - 1) / 2, and the reverse loop rebuilds i = 1 + 2 k.
func.func @f(%x: f64) -> f64 {
  %lb = arith.constant 1 : i32
  %ub = arith.constant 8 : i32
  %st = arith.constant 2 : i32
  %r = scf.for %i = %lb to %ub step %st iter_args(%h = %x) -> (f64) : i32 {
    %fi = arith.sitofp %i : i32 to f64
    %a = arith.mulf %h, %fi : f64
    %s = math.sin %a : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: f64) -> f64 {
  %g = autodiff.grad @f(%x) : (f64) -> f64
  func.return %g : f64
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK:         %[[LB:.*]] = arith.constant 1 : i32
// CHECK:         %[[ST:.*]] = arith.constant 2 : i32
// CHECK:         %[[EMPTY:.*]] = nn.full 0.0 : tensor<4xf64>
// CHECK:         scf.for %[[I:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[T:.*]] = %[[EMPTY]]) -> (f64, tensor<4xf64>) : i32 {
// CHECK:           %[[OFF:.*]] = arith.subi %[[I]], %[[LB]] : i32
// CHECK-NEXT:      %[[ROW:.*]] = arith.divsi %[[OFF]], %[[ST]] : i32
// CHECK-NEXT:      %[[POS:.*]] = arith.index_cast %[[ROW]] : i32 to index
// CHECK-NEXT:      tensor.insert %[[H]] into %[[T]][%[[POS]]] : tensor<4xf64>
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : i32
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %[[FOUR]] step %{{.*}} iter_args({{.*}}) -> (f64) : i32 {
// CHECK-NEXT:      %[[K:.*]] = arith.subi %{{.*}}, %[[J]] : i32
// CHECK-NEXT:      %[[STEPS:.*]] = arith.muli %[[K]], %[[ST]] : i32
// CHECK-NEXT:      %[[IV:.*]] = arith.addi %[[LB]], %[[STEPS]] : i32
// CHECK-NEXT:      %[[KI:.*]] = arith.index_cast %[[K]] : i32 to index
// CHECK-NEXT:      %[[HK:.*]] = tensor.extract %{{.*}}[%[[KI]]] : tensor<4xf64>
// CHECK-NEXT:      func.call @f_for_body_vjp(%[[IV]], %[[HK]], %{{.*}})

// -----

// scf.if: the reverse sweep has an scf.if on the same condition whose branches call each branch's VJP,
// which recomputes the branch (nothing extra is yielded from the forward scf.if). Forward mode: one scf.if
// yielding the result and its tangent. Both branches are outlined with the same arguments.
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>, %p: i1) -> tensor<3xf32> {
  %r = scf.if %p -> (tensor<3xf32>) {
    %e = nn.exp %x : tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  } else {
    %m = nn.mul %x, %y : tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>, %p: i1, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %r, %dx = autodiff.vjp @f(%x, %y, %p) cotangents(%ct : tensor<3xf32>) wrt [0] : (tensor<3xf32>, tensor<3xf32>, i1) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}
func.func @tangent(%x: tensor<3xf32>, %y: tensor<3xf32>, %p: i1, %v: tensor<3xf32>) -> tensor<3xf32> {
  %r, %t = autodiff.jvp @f(%x, %y, %p) tangents(%v : tensor<3xf32>) wrt [0] : (tensor<3xf32>, tensor<3xf32>, i1) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %t : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[P:.*]]: i1, %[[CT:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[R:.*]] = scf.if %[[P]] -> (tensor<3xf32>) {
// CHECK:           nn.mul %[[X]], %[[Y]]
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[X_BAR:.*]] = scf.if %[[P]] -> (tensor<3xf32>) {
// CHECK-NEXT:      %{{.*}}, %[[DT:.*]] = func.call @f_if_then_vjp(%[[X]], %[[Y]], %[[CT]])
// CHECK-NEXT:      scf.yield %[[DT]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %{{.*}}, %[[DE:.*]] = func.call @f_if_else_vjp(%[[X]], %[[Y]], %[[CT]])
// CHECK-NEXT:      scf.yield %[[DE]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[X_BAR]]
// CHECK-LABEL: func.func private @f_if_then_vjp(
// CHECK-NEXT:    nn.exp
// CHECK-LABEL: func.func private @f_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[P:.*]]: i1, %[[X_DOT:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[R:.*]], %[[R_DOT:.*]] = scf.if %[[P]] -> (tensor<3xf32>, tensor<3xf32>) {
// CHECK-NEXT:      %[[A:.*]], %[[A_DOT:.*]] = func.call @f_if_then_jvp(%[[X]], %[[Y]], %[[X_DOT]])
// CHECK-NEXT:      scf.yield %[[A]], %[[A_DOT]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[B:.*]], %[[B_DOT:.*]] = func.call @f_if_else_jvp(%[[X]], %[[Y]], %[[X_DOT]])
// CHECK-NEXT:      scf.yield %[[B]], %[[B_DOT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[R_DOT]]
// CHECK-LABEL: func.func private @f_if_else_vjp(
// CHECK-NEXT:    nn.mul

// -----

// scf.while: reverse mode counts the iterations in the forward loop, then for k = n-1 down to 0 recomputes
// iteration k's carried value from the initial one (an inner scf.for of k steps) and applies the body's
// VJP: O(n^2) compute, no tape, no dynamic shape. Forward mode carries the tangent through both regions.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = scf.while (%h = %x) : (tensor<3xf32>) -> tensor<3xf32> {
    %s = nn.reduce_sum %h axes = [0] : tensor<3xf32> -> tensor<f32>
    %lim = nn.full 100.0 : tensor<f32>
    %p = nn.compare lt, %s, %lim : tensor<f32>
    %c = tensor.extract %p[] : tensor<i1>
    scf.condition(%c) %h : tensor<3xf32>
  } do {
  ^bb0(%g: tensor<3xf32>):
    %e = nn.exp %g : tensor<3xf32>
    scf.yield %e : tensor<3xf32>
  }
  func.return %r : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %y, %dx = autodiff.vjp @f(%x) cotangents(%ct : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %dx : tensor<3xf32>
}
func.func @tangent(%x: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %y, %t = autodiff.jvp @f(%x) tangents(%v : tensor<3xf32>) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  func.return %t : tensor<3xf32>
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[R:.*]], %[[N:.*]] = scf.while (%[[H:.*]] = %[[X]], %[[COUNT:.*]] = %[[ZERO]]) : (tensor<3xf32>, index) -> (tensor<3xf32>, index) {
// CHECK:           scf.condition(%{{.*}}) %[[H]], %[[COUNT]] : tensor<3xf32>, index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[G:.*]]: tensor<3xf32>, %[[COUNT2:.*]]: index):
// CHECK-NEXT:      %[[E:.*]] = nn.exp %[[G]]
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[COUNT2]], %[[ONE]] : index
// CHECK-NEXT:      scf.yield %[[E]], %[[NEXT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[LAST:.*]] = arith.subi %[[N]], %[[ONE]]
// CHECK-NEXT:    %[[X_BAR:.*]] = scf.for %[[J:.*]] = %[[ZERO]] to %[[N]] step %[[ONE]] iter_args(%[[G_CT:.*]] = %[[CT]])
// CHECK-NEXT:      %[[K:.*]] = arith.subi %[[LAST]], %[[J]]
// CHECK-NEXT:      %[[GK:.*]] = scf.for %{{.*}} = %[[ZERO]] to %[[K]] step %[[ONE]] iter_args(%[[A:.*]] = %[[X]])
// CHECK-NEXT:        %[[B:.*]] = func.call @f_while_body(%[[A]])
// CHECK-NEXT:        scf.yield %[[B]]
// CHECK-NEXT:      }
// CHECK-NEXT:      %{{.*}}, %[[DG:.*]] = func.call @f_while_body_vjp(%[[GK]], %[[G_CT]])
// CHECK-NEXT:      scf.yield %[[DG]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[X_BAR]]
// CHECK-LABEL: func.func private @f_while_body(
// CHECK-LABEL: func.func private @f_jvp(
// CHECK-SAME:      %[[X:.*]]: tensor<3xf32>, %[[X_DOT:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[R:.*]], %[[R_DOT:.*]] = scf.while (%[[H:.*]] = %[[X]], %[[H_DOT:.*]] = %[[X_DOT]])
// CHECK:           scf.condition(%{{.*}}) %[[H]], %[[H_DOT]]
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[G:.*]]: tensor<3xf32>, %[[G_DOT:.*]]: tensor<3xf32>):
// CHECK-NEXT:      %[[A:.*]], %[[A_DOT:.*]] = func.call @f_while_body_jvp(%[[G]], %[[G_DOT]])
// CHECK-NEXT:      scf.yield %[[A]], %[[A_DOT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %[[R]], %[[R_DOT]]

// -----

// tensor.extract / tensor.insert (each other's transpose): the extracted element's cotangent is inserted
// into zeros; an inserted scalar gets the cotangent's element, the destination the cotangent with that
// element zeroed. tensor.from_elements: one extract per element.
func.func @f(%x: tensor<2xf32>, %s: f32) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tensor.extract %x[%c0] : tensor<2xf32>
  %b = arith.mulf %a, %s : f32
  %y = tensor.insert %b into %x[%c1] : tensor<2xf32>
  func.return %y : tensor<2xf32>
}
func.func @main(%x: tensor<2xf32>, %s: f32, %ct: tensor<2xf32>) -> (tensor<2xf32>, f32) {
  %y, %dx, %ds = autodiff.vjp @f(%x, %s) cotangents(%ct : tensor<2xf32>) wrt [0, 1] : (tensor<2xf32>, f32) -> (tensor<2xf32>, tensor<2xf32>, f32)
  func.return %dx, %ds : tensor<2xf32>, f32
}
func.func @g(%a: f32, %b: f32) -> tensor<2xf32> {
  %t = tensor.from_elements %a, %b : tensor<2xf32>
  func.return %t : tensor<2xf32>
}
func.func @main2(%a: f32, %b: f32, %ct: tensor<2xf32>) -> (f32, f32) {
  %y, %da, %db = autodiff.vjp @g(%a, %b) cotangents(%ct : tensor<2xf32>) wrt [0, 1] : (f32, f32) -> (tensor<2xf32>, f32, f32)
  func.return %da, %db : f32, f32
}

// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<2xf32>, %[[S:.*]]: f32, %[[CT:.*]]: tensor<2xf32>)
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[A:.*]] = tensor.extract %[[X]][%[[C0]]]
// CHECK:         %[[B_BAR:.*]] = tensor.extract %[[CT]][%[[C1]]] : tensor<2xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[X_BAR:.*]] = tensor.insert %[[ZERO]] into %[[CT]][%[[C1]]] : tensor<2xf32>
// CHECK:         arith.select
// CHECK:         math.absf
// CHECK:         %[[A_BAR:.*]] = arith.select
// CHECK:         %[[ZEROS:.*]] = nn.full 0.0 : tensor<2xf32>
// CHECK-NEXT:    %[[TERM:.*]] = tensor.insert %[[A_BAR]] into %[[ZEROS]][%[[C0]]] : tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = nn.add %[[X_BAR]], %[[TERM]]
// CHECK-LABEL: func.func private @g_vjp(
// CHECK-SAME:      %{{.*}}: f32, %{{.*}}: f32, %[[CT:.*]]: tensor<2xf32>)
// CHECK-NEXT:    tensor.from_elements
// CHECK-NEXT:    %[[I0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[DA:.*]] = tensor.extract %[[CT]][%[[I0]]]
// CHECK-NEXT:    %[[I1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[DB:.*]] = tensor.extract %[[CT]][%[[I1]]]
// CHECK-NEXT:    func.return %{{.*}}, %[[DA]], %[[DB]]

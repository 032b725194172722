// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s
// RUN: irgrad-opt %s -p 'checkpoint-chain{segments=3}' --split-input-file | filecheck %s --check-prefix=CHAIN
// RUN: irgrad-opt %s -p 'checkpoint-chain{segments=3},autodiff' --split-input-file | filecheck %s --check-prefix=BOTH

// autodiff.checkpoint: the forward sweep keeps only the callee's arguments and results; the reverse sweep
// calls @block_vjp, whose forward sweep re-runs @block's ops in the same order (bit-identical values).
// Numbers and the O(sqrt n) count: tests/unit/autodiff/test_autodiff_checkpoint.py.
func.func @block(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.tanh %x : tensor<4xf32>
  %b = nn.sin %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %y = autodiff.checkpoint @block(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = nn.reduce_sum %y axes = [0] : tensor<4xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = autodiff.grad @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHECK-LABEL: func.func private @block_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[CT:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[A:.*]] = nn.tanh %[[X]]
// CHECK-NEXT:    %[[B:.*]] = nn.sin %[[A]]
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    func.call @block(
// CHECK-LABEL: func.func private @f_vjp(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>, %[[CT:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[Y:.*]] = func.call @block(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[Y]]
// CHECK-NEXT:    %[[Y_BAR:.*]] = nn.broadcast_in_dim %[[CT]]
// CHECK-NEXT:    %{{.*}}, %[[X_BAR:.*]] = func.call @block_vjp(%[[X]], %[[Y_BAR]])
// CHECK-NEXT:    func.return %[[S]], %[[X_BAR]]
// CHECK-NOT:   autodiff.checkpoint

// -----

// checkpoint-chain{segments=3}: a 6-stage chain in a function a reverse-mode request names becomes three
// checkpointed segments of two stages; the constant is copied into each segment that uses it. The
// reverse sweep of @f then reads only the segments' inputs.
func.func @f(%x0: tensor<4xf32>) -> tensor<f32> {
  %k = nn.full 0.5 : tensor<4xf32>
  %x1 = nn.tanh %x0 : tensor<4xf32>
  %x2 = nn.mul %x1, %k : tensor<4xf32>
  %x3 = nn.tanh %x2 : tensor<4xf32>
  %x4 = nn.mul %x3, %k : tensor<4xf32>
  %x5 = nn.tanh %x4 : tensor<4xf32>
  %s = nn.reduce_sum %x5 axes = [0] : tensor<4xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %g = autodiff.grad @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %g : tensor<4xf32>
}

// CHAIN-LABEL: func.func @f(%x0: tensor<4xf32>)
// CHAIN-NEXT:    %[[X2:.*]] = autodiff.checkpoint @f_segment0(%x0) : (tensor<4xf32>) -> tensor<4xf32>
// CHAIN-NEXT:    %[[X4:.*]] = autodiff.checkpoint @f_segment1(%[[X2]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHAIN-NEXT:    %[[S:.*]] = autodiff.checkpoint @f_segment2(%[[X4]]) : (tensor<4xf32>) -> tensor<f32>
// CHAIN-NEXT:    func.return %[[S]]
// CHAIN-LABEL: func.func private @f_segment0(
// CHAIN-NEXT:    nn.full 0.5
// CHAIN-NEXT:    nn.tanh
// CHAIN-NEXT:    nn.mul
// CHAIN-NEXT:    func.return
// CHAIN-LABEL: func.func private @f_segment1(
// CHAIN-NEXT:    nn.tanh
// CHAIN-NEXT:    nn.full 0.5
// CHAIN-NEXT:    nn.mul
// CHAIN-NEXT:    func.return
// CHAIN-LABEL: func.func private @f_segment2(
// CHAIN-NEXT:    nn.tanh
// CHAIN-NEXT:    nn.reduce_sum
// CHAIN-NEXT:    func.return

// BOTH-LABEL: func.func private @f_vjp(%x0: tensor<4xf32>, %ct: tensor<f32>)
// BOTH-NEXT:    %[[X2:.*]] = func.call @f_segment0(%x0)
// BOTH-NEXT:    %[[X4:.*]] = func.call @f_segment1(%[[X2]])
// BOTH-NEXT:    %[[S:.*]] = func.call @f_segment2(%[[X4]])
// BOTH-NEXT:    %{{.*}}, %[[X4_BAR:.*]] = func.call @f_segment2_vjp(%[[X4]], %ct)
// BOTH-NEXT:    %{{.*}}, %[[X2_BAR:.*]] = func.call @f_segment1_vjp(%[[X2]], %[[X4_BAR]])
// BOTH-NEXT:    %{{.*}}, %[[X0_BAR:.*]] = func.call @f_segment0_vjp(%x0, %[[X2_BAR]])
// BOTH-NEXT:    func.return %[[S]], %[[X0_BAR]]

// The derivative of a sharding constraint is the same constraint on the cotangent (reverse
// mode) and on the tangent (forward mode), so the derivative program is laid out like the
// primal and shard-partition partitions both by the same rules.
// RUN: irgrad-opt %s -p autodiff,symbol-dce | filecheck %s
// RUN: irgrad-opt %s -p autodiff,symbol-dce,shard-partition | filecheck %s --check-prefix=SPMD

// CHECK-LABEL: func.func private @f_vjp(%x: tensor<8x4xf32>, %ct: tensor<f32>) -> (tensor<f32>, tensor<8x4xf32>)
// CHECK:         %[[S:.*]] = shard.sharding @mesh split_axes = {{\[\[}}0]] : !shard.sharding
// CHECK:         %[[A:.*]] = shard.shard %x to %[[S]] annotate_for_users : tensor<8x4xf32>
// CHECK:         nn.tanh %[[A]]
// CHECK:         %[[XBAR:.*]] = shard.shard %{{.*}} to %[[S]] annotate_for_users : tensor<8x4xf32>
// CHECK-NEXT:    func.return %{{.*}}, %[[XBAR]]
// CHECK-LABEL: func.func private @f_jvp(%x: tensor<8x4xf32>, %x_dot: tensor<8x4xf32>) -> (tensor<f32>, tensor<f32>)
// CHECK:         shard.shard %x to %[[S2:.*]] annotate_for_users : tensor<8x4xf32>
// CHECK:         shard.shard %x_dot to %[[S2]] annotate_for_users : tensor<8x4xf32>

// Partitioned: the gradient stays split like x (no collective for it); the loss is all-reduced.
// SPMD-LABEL: func.func @grad(%x: tensor<2x4xf32>) -> (tensor<f32>, tensor<2x4xf32>)
// SPMD-COUNT-1: shard.all_reduce
// SPMD-NOT:     shard.
// SPMD:         func.return
shard.grid @mesh(shape = 4)
func.func private @f(%x: tensor<8x4xf32>) -> tensor<f32> {
  %s = shard.sharding @mesh split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<8x4xf32>
  %t = nn.tanh %a : tensor<8x4xf32>
  %l = nn.reduce_sum %t axes = [0, 1] : tensor<8x4xf32> -> tensor<f32>
  func.return %l : tensor<f32>
}
func.func @grad(%x: tensor<8x4xf32>) -> (tensor<f32>, tensor<8x4xf32>) {
  %v, %g = autodiff.value_and_grad @f(%x) wrt [0] : (tensor<8x4xf32>) -> (tensor<f32>, tensor<8x4xf32>)
  func.return %v, %g : tensor<f32>, tensor<8x4xf32>
}
func.func @tangent(%x: tensor<8x4xf32>, %dx: tensor<8x4xf32>) -> (tensor<f32>, tensor<f32>) {
  %y, %dy = autodiff.jvp @f(%x) tangents(%dx : tensor<8x4xf32>) : (tensor<8x4xf32>) -> (tensor<f32>, tensor<f32>)
  func.return %y, %dy : tensor<f32>, tensor<f32>
}

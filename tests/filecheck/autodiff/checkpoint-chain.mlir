// RUN: irgrad-opt %s -p 'checkpoint-chain{segments=2}' --split-input-file | filecheck %s
// RUN: not irgrad-opt %s -p 'checkpoint-chain{segments=-1}' 2>&1 | filecheck %s --check-prefix=ERR

// A reverse-mode request's callee, a chain of four stages, becomes two checkpointed segments of
// two stages each; the request itself is untouched (autodiff differentiates the segments later).
// CHECK-LABEL: func.func @chain(%x: tensor<3xf64>) -> tensor<f64>
// CHECK-NEXT:    %[[B:.*]] = autodiff.checkpoint @chain_segment0(%x) : (tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT:    %[[S:.*]] = autodiff.checkpoint @chain_segment1(%[[B]]) : (tensor<3xf64>) -> tensor<f64>
// CHECK-NEXT:    func.return %[[S]] : tensor<f64>
// CHECK:       func.func private @chain_segment0(%x: tensor<3xf64>) -> tensor<3xf64>
// CHECK-COUNT-2: nn.tanh
// CHECK:       func.func private @chain_segment1(%b: tensor<3xf64>) -> tensor<f64>
// CHECK-COUNT-2: nn.tanh
// CHECK:         nn.reduce_sum
// CHECK-LABEL: func.func @main
// CHECK:         autodiff.grad @chain(%x) wrt [0]
// ERR: error: checkpoint-chain: segments=-1: must be 0 (the square root) or more
// ERR-NOT: Traceback
func.func @chain(%x: tensor<3xf64>) -> tensor<f64> {
  %a = nn.tanh %x : tensor<3xf64>
  %b = nn.tanh %a : tensor<3xf64>
  %c = nn.tanh %b : tensor<3xf64>
  %d = nn.tanh %c : tensor<3xf64>
  %s = nn.reduce_sum %d axes = [0] : tensor<3xf64> -> tensor<f64>
  func.return %s : tensor<f64>
}
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %g = autodiff.grad @chain(%x) : (tensor<3xf64>) -> tensor<3xf64>
  func.return %g : tensor<3xf64>
}

// -----

// A function that no reverse-mode request differentiates is left as it is.
// CHECK-LABEL: func.func @alone(%x: tensor<3xf64>) -> tensor<3xf64>
// CHECK-NEXT:    %a = nn.tanh %x : tensor<3xf64>
// CHECK-NEXT:    %b = nn.tanh %a : tensor<3xf64>
// CHECK-NEXT:    func.return %b : tensor<3xf64>
// CHECK-NOT:   autodiff.checkpoint
func.func @alone(%x: tensor<3xf64>) -> tensor<3xf64> {
  %a = nn.tanh %x : tensor<3xf64>
  %b = nn.tanh %a : tensor<3xf64>
  func.return %b : tensor<3xf64>
}

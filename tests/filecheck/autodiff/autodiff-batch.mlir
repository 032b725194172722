// RUN: irgrad-opt %s -p autodiff --split-input-file | filecheck %s

// Batching (vmap): `autodiff.batch @f` becomes a call of @f_batch, @f with every value that depends on a
// mapped argument carrying the batch as its dimension 0. This file shows the IR of the rules of a reduction,
// broadcast_in_dim, transpose and gather; tests/unit/autodiff/test_vmap_rules.py checks every rule numerically
// against a loop over the examples.

// reduce_sum: the same op, its axes shifted past the batch dimension (axes = [1] -> [2]). The batch is
// mapped at axis 2 of the argument and the result is stacked at axis 1: the request moves the batch to the
// front before the call and to out_axes after it, so the rule itself only ever sees it at dimension 0.
func.func @sum_rows(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %s = nn.reduce_sum %x axes = [1] : tensor<3x4xf32> -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}
func.func @use_sum_rows(%xs: tensor<3x4x8xf32>) -> tensor<3x8xf32> {
  %y = autodiff.batch @sum_rows(%xs) in_axes = [2] out_axes = [1] : (tensor<3x4x8xf32>) -> tensor<3x8xf32>
  func.return %y : tensor<3x8xf32>
}

// CHECK-LABEL: func.func private @sum_rows_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<8x3x4xf32>) -> tensor<8x3xf32> {
// CHECK-NEXT:    %[[S:.*]] = nn.reduce_sum %[[X]] axes = [2] : tensor<8x3x4xf32> -> tensor<8x3xf32>
// CHECK-NEXT:    func.return %[[S]] : tensor<8x3xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @use_sum_rows(
// CHECK-SAME:      %[[XS:.*]]: tensor<3x4x8xf32>)
// CHECK-NEXT:    %[[FRONT:.*]] = nn.transpose %[[XS]] perm = [2, 0, 1] : tensor<3x4x8xf32> -> tensor<8x3x4xf32>
// CHECK-NEXT:    %[[R:.*]] = func.call @sum_rows_batch(%[[FRONT]]) : (tensor<8x3x4xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.transpose %[[R]] perm = [1, 0] : tensor<8x3xf32> -> tensor<3x8xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<3x8xf32>
// CHECK-NOT:   autodiff.

// -----

// broadcast_in_dim: the batch dimension maps to the result's dimension 0 and the others shift by one
// (dims = [1] -> [0, 2]): one op, no broadcast of the batch.
func.func @bcast(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = nn.broadcast_in_dim %x dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
func.func @use_bcast(%xs: tensor<8x3xf32>) -> tensor<8x2x3xf32> {
  %y = autodiff.batch @bcast(%xs) in_axes = [0] out_axes = [0] : (tensor<8x3xf32>) -> tensor<8x2x3xf32>
  func.return %y : tensor<8x2x3xf32>
}

// CHECK-LABEL: func.func private @bcast_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<8x3xf32>) -> tensor<8x2x3xf32> {
// CHECK-NEXT:    %[[Y:.*]] = nn.broadcast_in_dim %[[X]] dims = [0, 2] : tensor<8x3xf32> -> tensor<8x2x3xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<8x2x3xf32>
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @use_bcast(
// CHECK-NEXT:    func.call @bcast_batch(
// CHECK-NEXT:    func.return

// -----

// transpose: the batch stays in front, perm = [2, 0, 1] -> [0, 3, 1, 2].
func.func @perm(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = nn.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %y : tensor<4x2x3xf32>
}
func.func @use_perm(%xs: tensor<8x2x3x4xf32>) -> tensor<8x4x2x3xf32> {
  %y = autodiff.batch @perm(%xs) in_axes = [0] out_axes = [0] : (tensor<8x2x3x4xf32>) -> tensor<8x4x2x3xf32>
  func.return %y : tensor<8x4x2x3xf32>
}

// CHECK-LABEL: func.func private @perm_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<8x2x3x4xf32>) -> tensor<8x4x2x3xf32> {
// CHECK-NEXT:    %[[Y:.*]] = nn.transpose %[[X]] perm = [0, 3, 1, 2] : tensor<8x2x3x4xf32> -> tensor<8x4x2x3xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<8x4x2x3xf32>
// CHECK-NEXT:  }

// -----

// gather, in its three cases, on the rows of a 5x3 matrix. One @take_batch is built per choice of mapped
// arguments.
func.func @take(%x: tensor<5x3xf32>, %i: tensor<2xi32>) -> tensor<2x3xf32> {
  %y = nn.gather %x[%i] axis = 0 : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
func.func @use_take(%xs: tensor<8x5x3xf32>, %x: tensor<5x3xf32>, %is: tensor<8x2xi32>, %i: tensor<2xi32>) -> (tensor<8x2x3xf32>, tensor<8x2x3xf32>, tensor<8x2x3xf32>) {
  %a = autodiff.batch @take(%xs, %i) in_axes = [0, -1] out_axes = [0] : (tensor<8x5x3xf32>, tensor<2xi32>) -> tensor<8x2x3xf32>
  %b = autodiff.batch @take(%x, %is) in_axes = [-1, 0] out_axes = [0] : (tensor<5x3xf32>, tensor<8x2xi32>) -> tensor<8x2x3xf32>
  %c = autodiff.batch @take(%xs, %is) in_axes = [0, 0] out_axes = [0] : (tensor<8x5x3xf32>, tensor<8x2xi32>) -> tensor<8x2x3xf32>
  func.return %a, %b, %c : tensor<8x2x3xf32>, tensor<8x2x3xf32>, tensor<8x2x3xf32>
}

// Only the operand is mapped: gather its axis + 1 with the shared indices.
// CHECK-LABEL: func.func private @take_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<8x5x3xf32>, %[[I:.*]]: tensor<2xi32>) -> tensor<8x2x3xf32> {
// CHECK-NEXT:    %[[Y:.*]] = nn.gather %[[X]][%[[I]]] axis = 1 : (tensor<8x5x3xf32>, tensor<2xi32>) -> tensor<8x2x3xf32>
// CHECK-NEXT:    func.return %[[Y]]

// Only the indices are mapped: one gather of the shared matrix with all the examples' indices, [8, 2] in
// place of the row dimension; it is already in front, so nothing moves.
// CHECK-LABEL: func.func private @take_batch_1(
// CHECK-SAME:      %[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<8x2xi32>) -> tensor<8x2x3xf32> {
// CHECK-NEXT:    %[[Y:.*]] = nn.gather %[[X]][%[[I]]] axis = 0 : (tensor<5x3xf32>, tensor<8x2xi32>) -> tensor<8x2x3xf32>
// CHECK-NEXT:    func.return %[[Y]]

// Both mapped (a per-example label into per-example logits): the batch is flattened into the rows, [40, 3],
// and example b's index i becomes b * 5 + i. Before the offset, i is normalized as nn.gather would within its
// own example (a negative index counts from the end, then clamp to 0..4), so no index reaches another
// example's rows.
// CHECK-LABEL: func.func private @take_batch_2(
// CHECK-SAME:      %[[X:.*]]: tensor<8x5x3xf32>, %[[I:.*]]: tensor<8x2xi32>) -> tensor<8x2x3xf32> {
// CHECK-NEXT:    %[[ZERO:.*]] = nn.full 0 : tensor<8x2xi32>
// CHECK-NEXT:    %[[NEG:.*]] = nn.compare lt, %[[I]], %[[ZERO]] : tensor<8x2xi32>
// CHECK-NEXT:    %[[N:.*]] = nn.full 5 : tensor<8x2xi32>
// CHECK-NEXT:    %[[FROM_END:.*]] = nn.add %[[I]], %[[N]] : tensor<8x2xi32>
// CHECK-NEXT:    %[[WRAPPED:.*]] = nn.select %[[NEG]], %[[FROM_END]], %[[I]] : tensor<8x2xi1>, tensor<8x2xi32>
// CHECK-NEXT:    %[[LOW:.*]] = nn.maximum %[[WRAPPED]], %[[ZERO]] : tensor<8x2xi32>
// CHECK-NEXT:    %[[LAST:.*]] = nn.full 4 : tensor<8x2xi32>
// CHECK-NEXT:    %[[CLAMPED:.*]] = nn.minimum %[[LOW]], %[[LAST]] : tensor<8x2xi32>
// CHECK-NEXT:    %[[B:.*]] = nn.iota dim = 0 : tensor<8xi32>
// CHECK-NEXT:    %[[ROW_SIZE:.*]] = nn.full 5 : tensor<8xi32>
// CHECK-NEXT:    %[[FIRST_ROW:.*]] = nn.mul %[[B]], %[[ROW_SIZE]] : tensor<8xi32>
// CHECK-NEXT:    %[[OFFSET:.*]] = nn.broadcast_in_dim %[[FIRST_ROW]] dims = [0] : tensor<8xi32> -> tensor<8x2xi32>
// CHECK-NEXT:    %[[FLAT_I:.*]] = nn.add %[[CLAMPED]], %[[OFFSET]] : tensor<8x2xi32>
// CHECK-NEXT:    %[[ROWS:.*]] = nn.reshape %[[X]] : tensor<8x5x3xf32> -> tensor<40x3xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.gather %[[ROWS]][%[[FLAT_I]]] axis = 0 : (tensor<40x3xf32>, tensor<8x2xi32>) -> tensor<8x2x3xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// gather of columns (axis 1), with mapped indices.
func.func @take_cols(%x: tensor<3x5xf32>, %i: tensor<2xi32>) -> tensor<3x2xf32> {
  %y = nn.gather %x[%i] axis = 1 : (tensor<3x5xf32>, tensor<2xi32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}
func.func @use_take_cols(%x: tensor<3x5xf32>, %xs: tensor<8x3x5xf32>, %is: tensor<8x2xi32>) -> (tensor<8x3x2xf32>, tensor<8x3x2xf32>) {
  %b = autodiff.batch @take_cols(%x, %is) in_axes = [-1, 0] out_axes = [0] : (tensor<3x5xf32>, tensor<8x2xi32>) -> tensor<8x3x2xf32>
  %c = autodiff.batch @take_cols(%xs, %is) in_axes = [0, 0] out_axes = [0] : (tensor<8x3x5xf32>, tensor<8x2xi32>) -> tensor<8x3x2xf32>
  func.return %b, %c : tensor<8x3x2xf32>, tensor<8x3x2xf32>
}

// A shared matrix: the examples' indices take the column dimension's place, [3, 8, 2], and a transpose
// brings the batch to the front (cheaper than broadcasting the matrix to every example).
// CHECK-LABEL: func.func private @take_cols_batch(
// CHECK-SAME:      %[[X:.*]]: tensor<3x5xf32>, %[[I:.*]]: tensor<8x2xi32>) -> tensor<8x3x2xf32> {
// CHECK-NEXT:    %[[G:.*]] = nn.gather %[[X]][%[[I]]] axis = 1 : (tensor<3x5xf32>, tensor<8x2xi32>) -> tensor<3x8x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.transpose %[[G]] perm = [1, 0, 2] : tensor<3x8x2xf32> -> tensor<8x3x2xf32>
// CHECK-NEXT:    func.return %[[Y]]

// Both mapped, with a dimension (the 3 rows) before the gathered one: instead of transposing the data, the
// whole [8, 3, 5] operand is flattened and the indices name single elements, (b * 3 + r) * 5 + i; they are
// built [8, 3, 2], the result's shape, so the gather gives it directly.
// CHECK-LABEL: func.func private @take_cols_batch_1(
// CHECK-SAME:      %[[X:.*]]: tensor<8x3x5xf32>, %[[I:.*]]: tensor<8x2xi32>) -> tensor<8x3x2xf32> {
// CHECK:         %[[CLAMPED:.*]] = nn.minimum %{{.*}}, %{{.*}} : tensor<8x2xi32>
// CHECK-NEXT:    %[[ROW:.*]] = nn.iota dim = 0 : tensor<24xi32>
// CHECK-NEXT:    %[[ROW_SIZE:.*]] = nn.full 5 : tensor<24xi32>
// CHECK-NEXT:    %[[FIRST:.*]] = nn.mul %[[ROW]], %[[ROW_SIZE]] : tensor<24xi32>
// CHECK-NEXT:    %[[FIRST_2D:.*]] = nn.reshape %[[FIRST]] : tensor<24xi32> -> tensor<8x3xi32>
// CHECK-NEXT:    %[[OFFSET:.*]] = nn.broadcast_in_dim %[[FIRST_2D]] dims = [0, 1] : tensor<8x3xi32> -> tensor<8x3x2xi32>
// CHECK-NEXT:    %[[IDX:.*]] = nn.broadcast_in_dim %[[CLAMPED]] dims = [0, 2] : tensor<8x2xi32> -> tensor<8x3x2xi32>
// CHECK-NEXT:    %[[FLAT_I:.*]] = nn.add %[[IDX]], %[[OFFSET]] : tensor<8x3x2xi32>
// CHECK-NEXT:    %[[ELEMENTS:.*]] = nn.reshape %[[X]] : tensor<8x3x5xf32> -> tensor<120xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.gather %[[ELEMENTS]][%[[FLAT_I]]] axis = 0 : (tensor<120xf32>, tensor<8x3x2xi32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    func.return %[[Y]]

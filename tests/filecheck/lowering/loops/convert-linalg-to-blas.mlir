// RUN: not irgrad-opt -p convert-linalg-to-blas --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-linalg-to-blas --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p convert-linalg-to-blas --verify-each=numeric --split-input-file %s 2>&1 >/dev/null | grep -c "error:"' | filecheck %s --check-prefix=NUMERIC
// RUN: sh -c 'irgrad-opt -p convert-linalg-to-blas --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-opt -p 'convert-linalg-to-blas{min_flops=-1}' %s 2>&1 | filecheck %s --check-prefix=OPTION
// ERR-NOT: Traceback
// With --verify-each=numeric, the only errors are the two of the erroring cases at the end
// (the numeric check finds no difference elsewhere).
// NUMERIC: {{^2$}}

// The zero fill bufferization puts before a matmul becomes beta = 0 and goes away, with its
// constant.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT:    blas.gemm %a, %b, %c {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64} : memref<32x48xf32>, memref<48x40xf32>, memref<32x40xf32>
// CHECK-NEXT:    func.return
func.func @plain(%a: memref<32x48xf32>, %b: memref<48x40xf32>, %c: memref<32x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x40xf32>)
  linalg.matmul ins(%a, %b : memref<32x48xf32>, memref<48x40xf32>) outs(%c : memref<32x40xf32>)
  func.return
}

// Without the fill, the matmul accumulates into C: beta = 1.
// CHECK-LABEL: func.func @accumulate
// CHECK-NEXT:    blas.gemm %a, %b, %c {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : memref<32x48xf64>, memref<48x40xf64>, memref<32x40xf64>
func.func @accumulate(%a: memref<32x48xf64>, %b: memref<48x40xf64>, %c: memref<32x40xf64>) {
  linalg.matmul ins(%a, %b : memref<32x48xf64>, memref<48x40xf64>) outs(%c : memref<32x40xf64>)
  func.return
}

// x^T @ dy, as the backward pass of a dense layer has it: the transposed copy of x becomes
// the transpose_a flag; the copy, its buffer and its dealloc go; the dealloc of x that came
// between the copy and the matmul moves after the gemm, which now reads x.
// CHECK-LABEL: func.func @weight_gradient
// CHECK:         %x = memref.alloc() : memref<48x32xf32>
// CHECK-NEXT:    linalg.generic
// CHECK:         blas.gemm %x, %dy, %dw {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, transpose_a} : memref<48x32xf32>, memref<48x40xf32>, memref<32x40xf32>
// CHECK-NEXT:    memref.dealloc %x : memref<48x32xf32>
// CHECK-NEXT:    func.return
// CHECK-NOT:     memref.alloc() : memref<32x48xf32>
func.func @weight_gradient(%x0: memref<48x32xf32>, %dy: memref<48x40xf32>, %dw: memref<32x40xf32>) {
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<48x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x0 : memref<48x32xf32>) outs(%x : memref<48x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  }
  %xt = memref.alloc() : memref<32x48xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<48x32xf32>) outs(%xt : memref<32x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %x : memref<48x32xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<32x40xf32>)
  linalg.matmul ins(%xt, %dy : memref<32x48xf32>, memref<48x40xf32>) outs(%dw : memref<32x40xf32>)
  memref.dealloc %xt : memref<32x48xf32>
  func.return
}

// The source a view (a collapse_shape) of a buffer freed between the copy and the matmul, as
// a convolution's weight gradient has it: the flag still applies, and the view's buffer is
// freed after the gemm.
// CHECK-LABEL: func.func @source_is_a_view
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %k
// CHECK-NEXT:    blas.gemm %rows, %[[FLAT]], %out {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, transpose_b} : memref<36x64xf32>, memref<8x64xf32>, memref<36x8xf32>
// CHECK-NEXT:    memref.dealloc %k : memref<8x4x4x4xf32>
// CHECK-NEXT:    func.return
func.func @source_is_a_view(%k0: memref<8x4x4x4xf32>, %rows: memref<36x64xf32>, %out: memref<36x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %k = memref.alloc() : memref<8x4x4x4xf32>
  "memref.copy"(%k0, %k) : (memref<8x4x4x4xf32>, memref<8x4x4x4xf32>) -> ()
  %flat = memref.collapse_shape %k [[0], [1, 2, 3]] : memref<8x4x4x4xf32> into memref<8x64xf32>
  %kt = memref.alloc() : memref<64x8xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%flat : memref<8x64xf32>) outs(%kt : memref<64x8xf32>) {
  ^bb0(%in: f32, %out_: f32):
    linalg.yield %in : f32
  }
  memref.dealloc %k : memref<8x4x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%out : memref<36x8xf32>)
  linalg.matmul ins(%rows, %kt : memref<36x64xf32>, memref<64x8xf32>) outs(%out : memref<36x8xf32>)
  memref.dealloc %kt : memref<64x8xf32>
  func.return
}

// dy @ W^T: the transpose_b flag.
// CHECK-LABEL: func.func @input_gradient
// CHECK-NEXT:    blas.gemm %dy, %w, %dx {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, transpose_b} : memref<32x40xf32>, memref<48x40xf32>, memref<32x48xf32>
// CHECK-NEXT:    func.return
func.func @input_gradient(%dy: memref<32x40xf32>, %w: memref<48x40xf32>, %dx: memref<32x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %wt = memref.alloc() : memref<40x48xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : memref<48x40xf32>) outs(%wt : memref<40x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%zero : f32) outs(%dx : memref<32x48xf32>)
  linalg.matmul ins(%dy, %wt : memref<32x40xf32>, memref<40x48xf32>) outs(%dx : memref<32x48xf32>)
  memref.dealloc %wt : memref<40x48xf32>
  func.return
}

// Negative cases: each stays as it was.

// A source written between its transposed copy and the matmul: the copy is a snapshot, so
// it must stay.
// CHECK-LABEL: func.func @source_written
// CHECK:         linalg.generic
// CHECK:         linalg.fill ins(%one : f32) outs(%w : memref<48x40xf32>)
// CHECK:         blas.gemm %dy, %wt, %dx {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64} : memref<32x40xf32>, memref<40x48xf32>, memref<32x48xf32>
func.func @source_written(%dy: memref<32x40xf32>, %w: memref<48x40xf32>, %dx: memref<32x48xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %wt = memref.alloc() : memref<40x48xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : memref<48x40xf32>) outs(%wt : memref<40x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  linalg.fill ins(%one : f32) outs(%w : memref<48x40xf32>)
  linalg.fill ins(%zero : f32) outs(%dx : memref<32x48xf32>)
  linalg.matmul ins(%dy, %wt : memref<32x40xf32>, memref<40x48xf32>) outs(%dx : memref<32x48xf32>)
  memref.dealloc %wt : memref<40x48xf32>
  func.return
}

// The output read between its zero fill and the matmul: the fill stays, beta = 1.
// CHECK-LABEL: func.func @output_read_after_fill
// CHECK:         linalg.fill ins(%zero : f32) outs(%c : memref<32x40xf32>)
// CHECK-NEXT:    memref.copy %c, %snapshot
// CHECK-NEXT:    blas.gemm %a, %b, %c {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64}
func.func @output_read_after_fill(%a: memref<32x48xf32>, %b: memref<48x40xf32>, %c: memref<32x40xf32>, %snapshot: memref<32x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<32x40xf32>)
  "memref.copy"(%c, %snapshot) : (memref<32x40xf32>, memref<32x40xf32>) -> ()
  linalg.matmul ins(%a, %b : memref<32x48xf32>, memref<48x40xf32>) outs(%c : memref<32x40xf32>)
  func.return
}

// A fill of another value: kept, beta = 1.
// CHECK-LABEL: func.func @nonzero_fill
// CHECK:         linalg.fill ins(%two : f32) outs(%c : memref<32x40xf32>)
// CHECK-NEXT:    blas.gemm %a, %b, %c {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64}
func.func @nonzero_fill(%a: memref<32x48xf32>, %b: memref<48x40xf32>, %c: memref<32x40xf32>) {
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%two : f32) outs(%c : memref<32x40xf32>)
  linalg.matmul ins(%a, %b : memref<32x48xf32>, memref<48x40xf32>) outs(%c : memref<32x40xf32>)
  func.return
}

// Integers have no BLAS: the loops lower them.
// CHECK-LABEL: func.func @integers
// CHECK:         linalg.matmul
// CHECK-NOT:     blas.gemm
func.func @integers(%a: memref<32x48xi32>, %b: memref<48x40xi32>, %c: memref<32x40xi32>) {
  linalg.matmul ins(%a, %b : memref<32x48xi32>, memref<48x40xi32>) outs(%c : memref<32x40xi32>)
  func.return
}

// Below min-flops (2 * 4 * 5 * 3 = 120 < 32768) the loop nest is faster than a call.
// CHECK-LABEL: func.func @small
// CHECK:         linalg.matmul
// CHECK-NOT:     blas.gemm
func.func @small(%a: memref<4x3xf32>, %b: memref<3x5xf32>, %c: memref<4x5xf32>) {
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x5xf32>) outs(%c : memref<4x5xf32>)
  func.return
}

// Batched matmuls: the generic nn.matmul lowers to with batch dimensions becomes an scf.for
// over the batch, with a gemm on rank-reducing subviews; C's zero fill becomes beta = 0.
// CHECK-LABEL: func.func @batched
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = arith.constant 1 : index
// CHECK-NEXT:    %2 = arith.constant 3 : index
// CHECK-NEXT:    scf.for %3 = %0 to %2 step %1 {
// CHECK-NEXT:      %4 = memref.subview %a[%3, 0, 0] [1, 32, 48] [1, 1, 1] : memref<3x32x48xf32> to memref<32x48xf32, strided<[48, 1], offset: ?>>
// CHECK-NEXT:      %5 = memref.subview %b[%3, 0, 0] [1, 48, 40] [1, 1, 1] : memref<3x48x40xf32> to memref<48x40xf32, strided<[40, 1], offset: ?>>
// CHECK-NEXT:      %6 = memref.subview %c[%3, 0, 0] [1, 32, 40] [1, 1, 1] : memref<3x32x40xf32> to memref<32x40xf32, strided<[40, 1], offset: ?>>
// CHECK-NEXT:      blas.gemm %4, %5, %6 {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64} : memref<32x48xf32, strided<[48, 1], offset: ?>>, memref<48x40xf32, strided<[40, 1], offset: ?>>, memref<32x40xf32, strided<[40, 1], offset: ?>>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @batched(%a: memref<3x32x48xf32>, %b: memref<3x48x40xf32>, %c: memref<3x32x40xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x32x40xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<3x32x48xf32>, memref<3x48x40xf32>) outs(%c : memref<3x32x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// Broadcasting: A's size-1 batch dimension read at index 0 and a 2-D B are the same matrix
// for every batch element: A's subview is taken once, before the loop, and B is used as it
// is. Without a zero fill the product accumulates into C: beta = 1.
// CHECK-LABEL: func.func @batched_broadcast
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = arith.constant 1 : index
// CHECK-NEXT:    %2 = arith.constant 3 : index
// CHECK-NEXT:    %3 = memref.subview %a[0, 0, 0] [1, 32, 48] [1, 1, 1] : memref<1x32x48xf32> to memref<32x48xf32, strided<[48, 1]>>
// CHECK-NEXT:    scf.for %4 = %0 to %2 step %1 {
// CHECK-NEXT:      %5 = memref.subview %c[%4, 0, 0] [1, 32, 40] [1, 1, 1] : memref<3x32x40xf32> to memref<32x40xf32, strided<[40, 1], offset: ?>>
// CHECK-NEXT:      blas.gemm %3, %b, %5 {alpha = 1.000000e+00 : f64, beta = 1.000000e+00 : f64} : memref<32x48xf32, strided<[48, 1]>>, memref<48x40xf32>, memref<32x40xf32, strided<[40, 1], offset: ?>>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @batched_broadcast(%a: memref<1x32x48xf32>, %b: memref<48x40xf32>, %c: memref<3x32x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<1x32x48xf32>, memref<48x40xf32>) outs(%c : memref<3x32x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// Two batch dimensions, the size-1 one needing no loop, in f64, on a strided (row slice)
// output; B read as (n, k) gives the transpose_b flag.
// CHECK-LABEL: func.func @batched_two_dims
// CHECK:         %[[C:.*]] = memref.subview %c0[0, 0, 0, 0] [2, 1, 32, 40] [1, 1, 1, 1]
// CHECK-NEXT:    %0 = arith.constant 0 : index
// CHECK-NEXT:    %1 = arith.constant 1 : index
// CHECK-NEXT:    %2 = arith.constant 2 : index
// CHECK-NEXT:    scf.for %3 = %0 to %2 step %1 {
// CHECK-NEXT:      %4 = memref.subview %a[%3, 0, 0, 0] [1, 1, 32, 48] [1, 1, 1, 1] : memref<2x1x32x48xf64> to memref<32x48xf64, strided<[48, 1], offset: ?>>
// CHECK-NEXT:      %5 = memref.subview %b[%3, 0, 0, 0] [1, 1, 40, 48] [1, 1, 1, 1] : memref<2x1x40x48xf64> to memref<40x48xf64, strided<[48, 1], offset: ?>>
// CHECK-NEXT:      %6 = memref.subview %[[C]][%3, 0, 0, 0] [1, 1, 32, 40] [1, 1, 1, 1] : memref<2x1x32x40xf64, strided<[5120, 1280, 40, 1]>> to memref<32x40xf64, strided<[40, 1], offset: ?>>
// CHECK-NEXT:      blas.gemm %4, %5, %6 {alpha = 1.000000e+00 : f64, beta = 0.000000e+00 : f64, transpose_b} : memref<32x48xf64, strided<[48, 1], offset: ?>>, memref<40x48xf64, strided<[48, 1], offset: ?>>, memref<32x40xf64, strided<[40, 1], offset: ?>>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @batched_two_dims(%a: memref<2x1x32x48xf64>, %b: memref<2x1x40x48xf64>, %c0: memref<2x4x32x40xf64>) {
  %c = memref.subview %c0[0, 0, 0, 0] [2, 1, 32, 40] [1, 1, 1, 1] : memref<2x4x32x40xf64> to memref<2x1x32x40xf64, strided<[5120, 1280, 40, 1]>>
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<2x1x32x40xf64, strided<[5120, 1280, 40, 1]>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<2x1x32x48xf64>, memref<2x1x40x48xf64>) outs(%c : memref<2x1x32x40xf64, strided<[5120, 1280, 40, 1]>>) {
  ^bb0(%x: f64, %y: f64, %acc: f64):
    %p = arith.mulf %y, %x : f64
    %s = arith.addf %p, %acc : f64
    linalg.yield %s : f64
  }
  func.return
}

// Batched negative cases: integers (no BLAS), a body that is not a multiply-accumulate, and
// a product below min-flops (2 * 2 * 4 * 5 * 3 = 240) stay generics.
// CHECK-LABEL: func.func @batched_integers
// CHECK:         linalg.generic
// CHECK-NOT:     blas.gemm
func.func @batched_integers(%a: memref<3x32x48xi32>, %b: memref<3x48x40xi32>, %c: memref<3x32x40xi32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<3x32x48xi32>, memref<3x48x40xi32>) outs(%c : memref<3x32x40xi32>) {
  ^bb0(%x: i32, %y: i32, %acc: i32):
    %p = arith.muli %x, %y : i32
    %s = arith.addi %acc, %p : i32
    linalg.yield %s : i32
  }
  func.return
}

// CHECK-LABEL: func.func @batched_not_multiply_accumulate
// CHECK:         linalg.generic
// CHECK:         arith.subf
// CHECK-NOT:     blas.gemm
func.func @batched_not_multiply_accumulate(%a: memref<3x32x48xf32>, %b: memref<3x48x40xf32>, %c: memref<3x32x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<3x32x48xf32>, memref<3x48x40xf32>) outs(%c : memref<3x32x40xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.subf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// CHECK-LABEL: func.func @batched_small
// CHECK:         linalg.generic
// CHECK-NOT:     blas.gemm
func.func @batched_small(%a: memref<2x4x3xf32>, %b: memref<2x3x5xf32>, %c: memref<2x4x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<2x4x3xf32>, memref<2x3x5xf32>) outs(%c : memref<2x4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A matmul on tensors is outside the input contract (stage "bufferized"): a located error,
// exit code 1 (it used to be left alone silently).
// ERR: convert-linalg-to-blas.mlir:[[# @LINE + 3]]:3: error: 'linalg.matmul' op requires buffer semantics; run bufferize first
// EXIT: exit=1
func.func @on_tensors(%a: tensor<32x48xf32>, %b: tensor<48x40xf32>, %c: tensor<32x40xf32>) -> tensor<32x40xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x48xf32>, tensor<48x40xf32>) outs(%c : tensor<32x40xf32>) -> tensor<32x40xf32>
  func.return %r : tensor<32x40xf32>
}

// -----

// Inner sizes that differ: the verifier rejects the matmul.
// ERR: convert-linalg-to-blas.mlir:[[# @LINE + 2]]:3: error: 'linalg.matmul' op inferred input/output operand #1 has shape's dimension #0 to be 48, but found 40
func.func @mismatch(%a: memref<32x48xf32>, %b: memref<40x40xf32>, %c: memref<32x40xf32>) {
  linalg.matmul ins(%a, %b : memref<32x48xf32>, memref<40x40xf32>) outs(%c : memref<32x40xf32>)
  func.return
}

// A negative min_flops is a bad pass option.
// OPTION-NOT: Traceback
// OPTION: irgrad-opt: error: invalid options for pass 'convert-linalg-to-blas': min_flops must be at least 0, got -1

// RUN: not irgrad-opt -p irgrad-cpu -t llvm --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=IR
// RUN: not irgrad-opt -p irgrad-cpu --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p irgrad-cpu --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p irgrad-cpu --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback

// The named pipeline `irgrad-cpu` (irgrad/pipelines.py: autodiff, nn -> linalg,
// fusion, bufferize, BLAS and loops, llvm) end to end, on a dense layer's loss:
// sum(relu(x @ w + b)). Key lines only; each pass has its own file for the details.
// Compiled results are checked against the interpreter in tests/unit/backends/cpu/test_cpu_end_to_end.py.

// The 64x64x64 matmul (2*64^3 flops, above min-flops) is a BLAS call into a fresh buffer
// (beta = 0: its zero fill is folded); bias, relu and the sum are fused into one reduction
// loop nest, unrolled over 8 partial sums (llvm.maximum is the relu); the result goes
// through the out-parameter, the buffer is freed. The packed entry point unpacks an array
// of argument pointers and calls the function.
// CHECK-LABEL: llvm.func @loss(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) {
// CHECK:         %[[C:.*]] = llvm.call @aligned_alloc(
// CHECK-NEXT:    llvm.call @irgrad_blas_sgemm({{.*}}, %[[C]], {{.*}}) : (i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64) -> ()
// CHECK:         llvm.cond_br
// CHECK:         llvm.fadd
// CHECK-NEXT:    llvm.call_intrinsic "llvm.maximum.f32"
// CHECK-NEXT:    llvm.fadd
// CHECK:         llvm.call @free(%[[C]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.return
// CHECK-LABEL: llvm.func @_irgrad_packed_loss(%{{.*}}: !llvm.ptr) {
// CHECK:         llvm.call @loss(
// CHECK-DAG:   llvm.func @irgrad_blas_sgemm(i64, i64, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-DAG:   llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-DAG:   llvm.func @free(!llvm.ptr)
// CHECK-NOT:   nn.
// CHECK-NOT:   linalg.
// CHECK-NOT:   memref.
// CHECK-NOT:   scf.

// The same module as LLVM IR (-t llvm).
// IR:      define void @"loss"(ptr %".1", ptr %".2", ptr %".3", ptr %".4")
// IR:        call ccc ptr @"aligned_alloc"(i64 64, i64 16384)
// IR-NEXT:   call ccc void @"irgrad_blas_sgemm"(i64 0, i64 0, i64 64, i64 64, i64 64, float 0x3ff0000000000000, ptr %".1", i64 64, ptr %".2", i64 64, float {{ *}}0x0, ptr %{{.*}}, i64 64)
// IR:        phi  float
// IR:        call float @"llvm.maximum.f32"(float %{{.*}}, float {{ *}}0x0)
// IR:        call ccc void @"free"(ptr
// IR-NEXT:   ret void
// IR:      define void @"_irgrad_packed_loss"(ptr %".1")
// IR:        call ccc void @"loss"(ptr
// IR:      declare void @"irgrad_blas_sgemm"(i64
func.func @loss(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %b: tensor<64xf32>) -> tensor<f32> {
  %h0 = nn.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %bb = nn.broadcast_in_dim %b dims = [1] : tensor<64xf32> -> tensor<64x64xf32>
  %h1 = nn.add %h0, %bb : tensor<64x64xf32>
  %h = nn.relu %h1 : tensor<64x64xf32>
  %s = nn.reduce_sum %h axes = [0, 1] : tensor<64x64xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// Does not apply: a matmul below min-flops (2*4*8*3) stays a loop nest, no BLAS call.
// CHECK-LABEL: llvm.func @small(
// CHECK-NOT:     irgrad_blas_sgemm
// CHECK:         llvm.return
// IR:      define void @"small"(
// IR-NOT:    irgrad_blas_sgemm
// IR:        ret void
func.func @small(%x: tensor<4x3xf32>, %w: tensor<3x8xf32>) -> tensor<f32> {
  %h0 = nn.matmul %x, %w : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  %h = nn.relu %h0 : tensor<4x8xf32>
  %s = nn.reduce_sum %h axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}

// -----

// Mismatched shapes: the nn verifiers' located errors, exit code 1.
// ERR: irgrad-cpu.mlir:[[# @LINE + 3]]:3: error: 'nn.matmul' op contracting dimensions differ: lhs 64x32, rhs 64x64
// EXIT: exit=1
func.func @bad_matmul(%x: tensor<64x32xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %h0 = nn.matmul %x, %w : (tensor<64x32xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %h0 : tensor<64x64xf32>
}

// -----

// ERR: irgrad-cpu.mlir:[[# @LINE + 2]]:3: error: 'nn.add' op operand 'rhs' at position 1 does not verify: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<4x9xf32>
func.func @bad_add(%x: tensor<4x8xf32>, %w: tensor<4x9xf32>) -> tensor<4x8xf32> {
  %h0 = "nn.add"(%x, %w) : (tensor<4x8xf32>, tensor<4x9xf32>) -> tensor<4x8xf32>
  func.return %h0 : tensor<4x8xf32>
}

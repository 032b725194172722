// RUN: irgrad-opt -t llvm %s | filecheck %s
// RUN: not irgrad-opt -p convert-to-llvm -t llvm %S/convert-to-llvm.mlir --split-input-file 2>/dev/null | filecheck %s --check-prefix=PIPE

// `-t llvm` (xDSL's target) prints LLVM IR for a stage-"llvm" module.

// CHECK:      define void @"axpy"(float %".1", ptr %".2", ptr %".3")
// CHECK:        %[[X:.*]] = load float, ptr %{{.*}}
// CHECK:        %[[AX:.*]] = fmul float %".1", %[[X]]
// CHECK:        store float %{{.*}}, ptr %{{.*}}
// CHECK:        ret void
// CHECK:      declare float @"llvm.maximum.f32"(float %".1", float %".2")
builtin.module {
  llvm.func @axpy(%a: f32, %x: !llvm.ptr, %y: !llvm.ptr) {
    %i = llvm.mlir.constant(1) : i64
    %px = llvm.getelementptr inbounds %x[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %vx = llvm.load %px : !llvm.ptr -> f32
    %ax = llvm.fmul %a, %vx : f32
    %vy = llvm.load %y : !llvm.ptr -> f32
    %s = llvm.fadd %ax, %vy : f32
    %m = llvm.call_intrinsic "llvm.maximum.f32"(%s, %vy) : (f32, f32) -> f32
    llvm.store %m, %y : f32, !llvm.ptr
    llvm.return
  }
}

// The whole pipeline's output translates too (the first case of convert-to-llvm.mlir).

// PIPE:      @"scale" = internal constant [4 x float] [float 0x4000000000000000, float 0x4008000000000000, float 0x4010000000000000, float 0x4014000000000000]
// PIPE:      define void @"scaled_exp"(ptr %".1", ptr %".2")
// PIPE:        call ccc ptr @"aligned_alloc"(i64 64, i64 64)
// PIPE:        call float @"llvm.exp.f32"(float
// PIPE:        call ccc void @"double_into"(ptr
// PIPE:        call ccc void @"free"(ptr
// PIPE:      define void @"_irgrad_packed_scaled_exp"(ptr %".1")

// RUN: not irgrad-opt -t llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -t llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -t llvm --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback
// RUN: not irgrad-opt -p convert-to-llvm -t llvm %S/../lowering/llvm/convert-to-llvm.mlir --split-input-file 2>/dev/null | filecheck %s --check-prefix=PIPE

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

// -----

// Input outside stage "llvm" is a located error naming the op and the rule (xDSL's target
// said only "Conversion not implemented for op: func.func", or "Type not supported: bf16",
// without a location).
// ERR: translate-llvm.mlir:[[# @LINE + 2]]:1: error: 'func.func' op breaks the "llvm" stage contract: only llvm dialect ops may remain (convert-to-llvm lowers the scf, cf, memref, arith, math and func ops of stage "loops")
// EXIT: exit=1
func.func @not_lowered(%a: f32) -> f32 {
  func.return %a : f32
}

// -----

// ERR: translate-llvm.mlir:[[# @LINE + 3]]:5: error: 'builtin.unrealized_conversion_cast' op breaks the "llvm" stage contract: a cast from f32 to i32 remains: a value of a non-llvm type is still used or defined
builtin.module {
  llvm.func @cast_left(%a: f32) -> f32 {
    %0 = builtin.unrealized_conversion_cast %a : f32 to i32
    %1 = builtin.unrealized_conversion_cast %0 : i32 to f32
    llvm.return %1 : f32
  }
}

// -----

// ERR: translate-llvm.mlir:[[# @LINE + 2]]:3: error: 'llvm.func' op breaks the "llvm" stage contract: values of type bf16 must be converted (index to i64, bf16 to i16, memref to !llvm.ptr)
builtin.module {
  llvm.func @bf16_value(%a: bf16) -> bf16 {
    llvm.return %a : bf16
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

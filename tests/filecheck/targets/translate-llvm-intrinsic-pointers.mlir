// RUN: not irgrad-opt -t llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -t llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -t llvm --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// ERR-NOT: Traceback

// An intrinsic's pointer parameters are opaque `ptr`s whatever its first call passed. xDSL's
// translation declared `llvm.memcpy` with the types of its first call's arguments, and a
// global's address is a typed pointer in llvmlite ([4 x float]*), so copying two constants
// of different types (an f32 and an i1 result of one program) failed: "Type of #2 arg
// mismatch: [4 x float]* != [3 x i8]*" (fixed in irgrad/xdsl_patches/llvm_call_intrinsic.py).

// CHECK:      @"floats" = internal constant [4 x float]
// CHECK:      @"bools" = internal constant [3 x i8]
// CHECK:      define void @"copy_both"(ptr %".1", ptr %".2")
// CHECK:        call void @"llvm.memcpy.p0.p0.i64"(ptr %".1", {{.*}}@"floats", i64 16, i1 false)
// CHECK:        call void @"llvm.memcpy.p0.p0.i64"(ptr %".2", {{.*}}@"bools", i64 3, i1 false)
// CHECK:      declare void @"llvm.memcpy.p0.p0.i64"(ptr %".1", ptr %".2", i64 %".3", i1 %".4")
builtin.module {
  llvm.mlir.global internal constant @floats(dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
  llvm.mlir.global internal constant @bools(dense<[1, 0, 1]> : tensor<3xi8>) {addr_space = 0 : i32} : !llvm.array<3 x i8>
  llvm.func @copy_both(%f: !llvm.ptr, %b: !llvm.ptr) {
    %c16 = llvm.mlir.constant(16) : i64
    %c3 = llvm.mlir.constant(3) : i64
    %false = llvm.mlir.constant(false) : i1
    %pf = llvm.mlir.addressof @floats : !llvm.ptr
    %pb = llvm.mlir.addressof @bools : !llvm.ptr
    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%f, %pf, %c16, %false) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%b, %pb, %c3, %false) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
    llvm.return
  }
}

// -----

// Only pointer parameters are opaque: two calls of one intrinsic with different non-pointer
// argument types (or result types) cannot share its one declaration. A located error at the
// second call (it was an llvmlite TypeError, "Type of #3 arg mismatch: i64 != i32", exit 2;
// a different result type was silently translated with the first one).
// ERR: translate-llvm-intrinsic-pointers.mlir:[[# @LINE + 6]]:5: error: 'llvm.call_intrinsic' op calls 'llvm.memcpy.p0.p0.i64' as (!llvm.ptr, !llvm.ptr, i32, i1) -> (), but an earlier call has type (!llvm.ptr, !llvm.ptr, i64, i1) -> (); an intrinsic has one signature in LLVM IR
// EXIT: exit=1
builtin.module {
  llvm.func @mixed_lengths(%f: !llvm.ptr, %b: !llvm.ptr, %n: i64, %m: i32) {
    %false = llvm.mlir.constant(false) : i1
    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%f, %b, %n, %false) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
    llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%b, %f, %m, %false) : (!llvm.ptr, !llvm.ptr, i32, i1) -> ()
    llvm.return
  }
}

// -----

// ERR: translate-llvm-intrinsic-pointers.mlir:[[# @LINE + 4]]:5: error: 'llvm.call_intrinsic' op calls 'llvm.maximum.f32' as (f32, f32) -> f64, but an earlier call has type (f32, f32) -> f32; an intrinsic has one signature in LLVM IR
builtin.module {
  llvm.func @mixed_results(%a: f32) -> f32 {
    %m = llvm.call_intrinsic "llvm.maximum.f32"(%a, %a) : (f32, f32) -> f32
    %n = llvm.call_intrinsic "llvm.maximum.f32"(%a, %a) : (f32, f32) -> f64
    llvm.return %m : f32
  }
}

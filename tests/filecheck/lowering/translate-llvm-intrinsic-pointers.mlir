// RUN: irgrad-opt -t llvm %s | filecheck %s

// An intrinsic's pointer parameters are opaque `ptr`s whatever its first call passed. xDSL's
// translation declared `llvm.memcpy` with the types of its first call's arguments, and a
// global's address is a typed pointer in llvmlite ([4 x float]*), so copying two constants
// of different types (an f32 and an i1 result of one program) failed: "Type of #2 arg
// mismatch: [4 x float]* != [3 x i8]*" (fixed in irgrad/xdsl_fixes.py).

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

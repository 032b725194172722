// RUN: irgrad-opt -p convert-gpu-to-nvvm %s --split-input-file --verify-diagnostics | filecheck %s

// A kernel becomes an llvm.func with the nvvm.kernel attribute (and, as upstream MLIR's, the
// gpu.kernel one) whose buffer arguments are global-address-space pointers, cast to generic
// ones on entry (llvm.addrspacecast). Thread and block ids and sizes read NVVM special
// registers (i32, zero-extended to the i64 of index). Host code is untouched.

// CHECK-LABEL: func.func @host
// CHECK:         gpu.launch_func
// CHECK:       gpu.module @kernels {
// CHECK-NEXT:    llvm.func @add_one(%[[ARG:.*]]: !llvm.ptr<1>, %[[N:.*]]: i64) attributes {nvvm.kernel, gpu.kernel} {
// CHECK-NEXT:      %[[P:.*]] = llvm.addrspacecast %[[ARG]] : !llvm.ptr<1> to !llvm.ptr
// CHECK:           %[[TID32:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:      %[[TID:.*]] = llvm.zext %[[TID32]] : i32 to i64
// CHECK:           llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
// CHECK:           llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ntid.x"() : () -> i32
// CHECK:           llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.nctaid.y"() : () -> i32
// CHECK:           %[[ADDR:.*]] = llvm.getelementptr inbounds %[[P]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:      %[[V:.*]] = llvm.load %[[ADDR]] : !llvm.ptr -> f32
// CHECK:           llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK:           llvm.return
// CHECK-NOT:     gpu.thread_id
func.func @host(%a: memref<64xf32>, %n: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  "gpu.launch_func"(%c1, %c1, %c1, %c64, %c1, %c1, %a, %n) <{kernel = @kernels::@add_one, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<64xf32>, index) -> ()
  func.return
}
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<64xf32>, index) -> (), kernel}> ({
  ^bb0(%a: memref<64xf32>, %n: index):
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %bid = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %bdim = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %gdim = "gpu.grid_dim"() <{dimension = #gpu<dim y>}> : () -> index
    %p = arith.muli %bid, %bdim : index
    %q = arith.addi %p, %tid : index
    %i = arith.addi %q, %gdim : index
    %v = memref.load %a[%i] : memref<64xf32>
    %one = arith.constant 1.0 : f32
    %w = arith.addf %v, %one : f32
    memref.store %w, %a[%i] : memref<64xf32>
    "gpu.return"() : () -> ()
  }) {sym_name = "add_one"} : () -> ()
}) : () -> ()

// -----

// Shared memory (memory space 3) is an internal address-space-3 global without initializer;
// its address is cast to a generic pointer. gpu.barrier is llvm.nvvm.barrier0.

// CHECK:       gpu.module @kernels {
// CHECK-NEXT:    llvm.mlir.global internal @__irgrad_shared_0() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<32 x f32>
// CHECK:         llvm.func @tree
// CHECK:           %[[SH:.*]] = llvm.mlir.addressof @__irgrad_shared_0 : !llvm.ptr<3>
// CHECK-NEXT:      %[[G:.*]] = llvm.addrspacecast %[[SH]] : !llvm.ptr<3> to !llvm.ptr
// CHECK:           llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr
// CHECK-NEXT:      llvm.call_intrinsic "llvm.nvvm.barrier0"() : () -> ()
// CHECK-NEXT:      %[[FIRST:.*]] = llvm.getelementptr inbounds %[[G]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:      llvm.load %[[FIRST]] : !llvm.ptr -> f32
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<32xf32>, memref<f32>) -> (), kernel}> ({
  ^bb0(%a: memref<32xf32>, %out: memref<f32>):
    %tid = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %shared = memref.alloca() : memref<32xf32, 3 : i64>
    %v = memref.load %a[%tid] : memref<32xf32>
    memref.store %v, %shared[%tid] : memref<32xf32, 3 : i64>
    "gpu.barrier"() : () -> ()
    %c0 = arith.constant 0 : index
    %first = memref.load %shared[%c0] : memref<32xf32, 3 : i64>
    memref.store %first, %out[] : memref<f32>
    "gpu.return"() : () -> ()
  }) {sym_name = "tree"} : () -> ()
}) : () -> ()

// -----

// Math: transcendental functions call libdevice (__nv_expf on f32, __nv_log on f64; f16
// computes in f32), tanh on f32 is the inline rational approximation (no call), sqrt stays
// an LLVM intrinsic (sqrt.rn in PTX).

// CHECK:         llvm.func @math
// CHECK:           llvm.call @__nv_expf(%{{.*}}) : (f32) -> f32
// CHECK:           llvm.call @__nv_log(%{{.*}}) : (f64) -> f64
// CHECK:           %[[WIDE:.*]] = llvm.fpext %{{.*}} : f16 to f32
// CHECK-NEXT:      %[[E:.*]] = llvm.call @__nv_expf(%[[WIDE]]) : (f32) -> f32
// CHECK-NEXT:      llvm.fptrunc %[[E]] : f32 to f16
// CHECK-NOT:       __nv_tanhf
// CHECK:           llvm.call_intrinsic "llvm.sqrt.f32"
// CHECK:         llvm.func @__nv_expf(f32) -> f32
// CHECK:         llvm.func @__nv_log(f64) -> f64
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<f32>, memref<f64>, memref<f16>) -> (), kernel}> ({
  ^bb0(%a: memref<f32>, %b: memref<f64>, %c: memref<f16>):
    %x = memref.load %a[] : memref<f32>
    %y = memref.load %b[] : memref<f64>
    %z = memref.load %c[] : memref<f16>
    %e = math.exp %x : f32
    %l = math.log %y : f64
    %h = math.exp %z : f16
    %t = math.tanh %e : f32
    %r = math.sqrt %t : f32
    memref.store %r, %a[] : memref<f32>
    memref.store %l, %b[] : memref<f64>
    memref.store %h, %c[] : memref<f16>
    "gpu.return"() : () -> ()
  }) {sym_name = "math"} : () -> ()
}) : () -> ()

// -----

// A gpu op without an NVVM lowering is a located error.

"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<index>) -> (), kernel}> ({
  ^bb0(%a: memref<index>):
    // expected-error @+1 {{'gpu.lane_id' op has no lowering in convert-gpu-to-nvvm}}
    %l = "gpu.lane_id"() : () -> index
    memref.store %l, %a[] : memref<index>
    "gpu.return"() : () -> ()
  }) {sym_name = "lanes"} : () -> ()
}) : () -> ()

// -----

// A GPU kernel has no runtime to report a failed assert (the CPU's raises an error from the
// call): cf.assert in a kernel is a located error, not a silent trap.

"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (i1) -> (), kernel}> ({
  ^bb0(%ok: i1):
    // expected-error @+1 {{'cf.assert' op is not supported here: convert-cf-to-llvm{lower_asserts=false} does not lower asserts (GPU kernels have no runtime to report a failed assert)}}
    cf.assert %ok, "checked"
    "gpu.return"() : () -> ()
  }) {sym_name = "asserts"} : () -> ()
}) : () -> ()

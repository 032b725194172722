// RUN: not irgrad-opt -p convert-math-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-math-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// Functions with an LLVM intrinsic use it; the others call libm, declared in the module.

// CHECK-LABEL: builtin.module
// CHECK:      func.func @f32_functions
// CHECK:      %[[E:.*]] = llvm.fmul %{{.*}}, %{{.*}} : f32
// CHECK:      %[[S:.*]] = llvm.call_intrinsic "llvm.sqrt.f32"(%[[E]]) : (f32) -> f32
// CHECK:      %[[M:.*]] = llvm.call @expm1f(%[[S]]) : (f32) -> f32
// CHECK:      %[[P:.*]] = llvm.call_intrinsic "llvm.pow.f32"(%[[M]], %x) : (f32, f32) -> f32
// CHECK:      func.return %[[P]] : f32
// CHECK:      llvm.func @expm1f(f32) -> f32
func.func @f32_functions(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  %1 = math.sqrt %0 : f32
  %2 = math.expm1 %1 : f32
  %3 = math.powf %2, %x : f32
  func.return %3 : f32
}

// -----

// exp flushes subnormal results to 0 and keeps its own argument at or above ln(FLT_MIN), where
// glibc's vector exp stays on its fast path: exp(select(x < b, b, x)) * (0 or 1), the 0-or-1
// from an unsigned compare of x's bits (LLVM would fold a float compare shared by both selects).

// CHECK-LABEL: func.func @exp_flushes_subnormals
// CHECK-SAME:    (%[[X:.*]]: f32, %[[Y:.*]]: f64)
// CHECK:      %[[B:.*]] = llvm.mlir.constant(-8.733000e+01 : f32) : f32
// CHECK:      %[[BITS:.*]] = llvm.mlir.constant(-1028740874 : i32) : i32
// CHECK:      llvm.mlir.constant(-7.083000e+02 : f64) : f64
// CHECK:      %[[LOW:.*]] = llvm.fcmp "olt" %[[X]], %[[B]] : f32
// CHECK:      %[[ARG:.*]] = llvm.select %[[LOW]], %[[B]], %[[X]] : i1, f32
// CHECK:      %[[E:.*]] = llvm.call_intrinsic "llvm.exp.f32"(%[[ARG]]) : (f32) -> f32
// CHECK:      %[[XBITS:.*]] = llvm.bitcast %[[X]] : f32 to i32
// CHECK:      %[[BELOW:.*]] = llvm.icmp "ugt" %[[XBITS]], %[[BITS]] : i32
// CHECK:      %[[KEEP:.*]] = llvm.select %[[BELOW]], %{{.*}}, %{{.*}} : i1, f32
// CHECK:      %[[R:.*]] = llvm.fmul %[[E]], %[[KEEP]] : f32
// CHECK:      llvm.call_intrinsic "llvm.exp.f64"
// CHECK:      llvm.bitcast %[[Y]] : f64 to i64
func.func @exp_flushes_subnormals(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.exp %x : f32
  %1 = math.exp %y : f64
  func.return %0, %1 : f32, f64
}

// -----

// tanh on f32 is an inline rational approximation (it vectorizes): clamp with
// compare-and-select (NaN passes through), x*P(x^2)/Q(x^2) with Horner steps as
// llvm.fmuladd (fused where the target has FMA) and an `afn` division (approximate on the
// GPU), x itself for tiny |x|. On f64 it is the llvm.tanh intrinsic (libm's tanh).

// CHECK-LABEL: func.func @tanh
// CHECK-NOT:  llvm.call
// CHECK:      %[[HI:.*]] = llvm.mlir.constant(7.90531111 : f32) : f32
// CHECK:      %[[ABOVE:.*]] = llvm.fcmp "ogt" %x, %[[HI]] : f32
// CHECK:      llvm.select %[[ABOVE]], %[[HI]], %x : i1, f32
// CHECK:      llvm.call_intrinsic "llvm.fmuladd.f32"(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// CHECK-NOT:  llvm.fadd
// CHECK:      %[[RATIO:.*]] = llvm.fdiv %{{.*}}, %{{.*}} {fastmathFlags = #llvm.fastmath<afn>} : f32
// CHECK:      %[[TINY:.*]] = llvm.fcmp "olt" %{{.*}}, %{{.*}} : f32
// CHECK:      %[[T32:.*]] = llvm.select %[[TINY]], %x, %[[RATIO]] : i1, f32
// CHECK:      %[[T64:.*]] = llvm.call_intrinsic "llvm.tanh.f64"(%y) : (f64) -> f64
// CHECK:      func.return %[[T32]], %[[T64]] : f32, f64
func.func @tanh(%x: f32, %y: f64) -> (f32, f64) {
  %0 = math.tanh %x : f32
  %1 = math.tanh %y : f64
  func.return %0, %1 : f32, f64
}

// -----

// f16 transcendental functions compute in f32 and round once; exact ones stay in f16.

// CHECK-LABEL: func.func @half
// CHECK:      %[[W:.*]] = llvm.fpext %x : f16 to f32
// CHECK:      %[[L:.*]] = llvm.call_intrinsic "llvm.log.f32"(%[[W]]) : (f32) -> f32
// CHECK:      %[[N:.*]] = llvm.fptrunc %[[L]] : f32 to f16
// CHECK:      %[[A:.*]] = llvm.call_intrinsic "llvm.fabs.f16"(%x) : (f16) -> f16
// CHECK:      func.return %[[N]], %[[A]] : f16, f16
func.func @half(%x: f16) -> (f16, f16) {
  %0 = math.log %x : f16
  %1 = math.absf %x : f16
  func.return %0, %1 : f16, f16
}

// -----

// Integer functions: ctlz takes an is-zero-poison flag (false: ctlz(0) is the width).

// CHECK-LABEL: func.func @integers
// CHECK:      %[[F:.*]] = llvm.mlir.constant(false) : i1
// CHECK:      llvm.call_intrinsic "llvm.ctlz.i32"(%x, %[[F]]) : (i32, i1) -> i32
// CHECK:      llvm.call_intrinsic "llvm.ctpop.i32"(%x) : (i32) -> i32
func.func @integers(%x: i32) -> (i32, i32) {
  %0 = math.ctlz %x : i32
  %1 = math.ctpop %x : i32
  func.return %0, %1 : i32, i32
}

// -----

// math.ipowi has no lowering: a located error that says what to write instead.

func.func @ipowi(%x: i32, %n: i32) -> i32 {
  %0 = math.ipowi %x, %n : i32
  func.return %0 : i32
}

// ERR: convert-math-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'math.ipowi' op has no lowering in convert-math-to-llvm (integer powers need a loop; express them with scf.for and arith.muli)

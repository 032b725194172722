// RUN: not irgrad-opt -p convert-arith-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-arith-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// Integer ops map one to one; division guards its divisor (0 and INT_MIN / -1 divide by 1)
// so that it can never trap; index is i64 behind an unrealized cast.

// CHECK-LABEL: func.func @integers
// CHECK:      %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK:      %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:      %[[SUM:.*]] = llvm.add %a, %b : i32
// CHECK:      %[[BY_ZERO:.*]] = llvm.icmp "eq" %b, %[[ZERO]] : i32
// CHECK:      %[[UNSAFE:.*]] = llvm.or %[[BY_ZERO]], %{{.*}} : i1
// CHECK:      %[[SAFE:.*]] = llvm.select %[[UNSAFE]], %[[ONE]], %b : i1, i32
// CHECK:      %[[Q:.*]] = llvm.sdiv %[[SUM]], %[[SAFE]] : i32
// CHECK:      %[[LT:.*]] = llvm.icmp "slt" %a, %b : i32
// CHECK:      %[[NARROW:.*]] = llvm.trunc %[[I]] : i64 to i32
// CHECK:      func.return %[[Q]], %[[LT]], %[[NARROW]] : i32, i1, i32
func.func @integers(%a: i32, %b: i32, %i: index) -> (i32, i1, i32) {
  %0 = arith.addi %a, %b : i32
  %1 = arith.divsi %0, %b : i32
  %2 = arith.cmpi slt, %a, %b : i32
  %3 = arith.index_cast %i : index to i32
  func.return %1, %2, %3 : i32, i1, i32
}

// -----

// NaN-propagating max/min are llvm.maximum/minimum, maxnum/minnum the IEEE 754-2019
// maximumnum/minimumnum (never llvm.maxnum); float to int saturates.

// CHECK-LABEL: func.func @floats
// CHECK:      %[[MAX:.*]] = llvm.call_intrinsic "llvm.maximum.f32"(%x, %y) : (f32, f32) -> f32
// CHECK:      %[[MIN:.*]] = llvm.call_intrinsic "llvm.minimum.f32"(%x, %y) : (f32, f32) -> f32
// CHECK:      %[[MAXNUM:.*]] = llvm.call_intrinsic "llvm.maximumnum.f32"(%x, %y) : (f32, f32) -> f32
// CHECK:      %[[ULT:.*]] = llvm.fcmp "ult" %x, %y : f32
// CHECK:      %[[INT:.*]] = llvm.call_intrinsic "llvm.fptosi.sat.i32.f32"(%x) : (f32) -> i32
// CHECK:      %[[WIDE:.*]] = llvm.fpext %x : f32 to f64
// CHECK:      func.return %[[MAX]], %[[MIN]], %[[MAXNUM]], %[[ULT]], %[[INT]], %[[WIDE]]
// CHECK-NOT:  llvm.intr.maxnum
func.func @floats(%x: f32, %y: f32) -> (f32, f32, f32, i1, i32, f64) {
  %0 = arith.maximumf %x, %y : f32
  %1 = arith.minimumf %x, %y : f32
  %2 = arith.maxnumf %x, %y : f32
  %3 = arith.cmpf ult, %x, %y : f32
  %4 = arith.fptosi %x : f32 to i32
  %5 = arith.extf %x : f32 to f64
  func.return %0, %1, %2, %3, %4, %5 : f32, f32, f32, i1, i32, f64
}

// -----

// bf16 lives in an i16: widen to f32 (shift into the high half), compute, round to nearest
// even with the NaN case kept apart.

// CHECK-LABEL: func.func @bf16_add
// CHECK:      llvm.mlir.constant(32767 : i32) : i32
// CHECK:      %[[X:.*]] = builtin.unrealized_conversion_cast %x : bf16 to i16
// CHECK:      %[[XW:.*]] = llvm.zext %[[X]] : i16 to i32
// CHECK:      %[[XF:.*]] = llvm.bitcast %{{.*}} : i32 to f32
// CHECK:      %[[SUM:.*]] = llvm.fadd %[[XF]], %{{.*}} : f32
// CHECK:      %[[BITS:.*]] = llvm.bitcast %[[SUM]] : f32 to i32
// CHECK:      %[[NAN:.*]] = llvm.fcmp "uno" %[[SUM]], %[[SUM]] : f32
// CHECK:      %[[PICK:.*]] = llvm.select %[[NAN]], %{{.*}}, %{{.*}} : i1, i32
// CHECK:      %[[R:.*]] = llvm.trunc %[[PICK]] : i32 to i16
// CHECK:      %[[OUT:.*]] = builtin.unrealized_conversion_cast %[[R]] : i16 to bf16
// CHECK:      func.return %[[OUT]] : bf16
func.func @bf16_add(%x: bf16, %y: bf16) -> bf16 {
  %0 = arith.addf %x, %y : bf16
  func.return %0 : bf16
}

// -----

// xDSL's llvm dialect has no uitofp: a u64 is halved (sticky low bit), converted, doubled.

// CHECK-LABEL: func.func @unsigned_to_float
// CHECK:      %[[HALF:.*]] = llvm.lshr %x, %{{.*}} : i64
// CHECK:      %[[F:.*]] = llvm.sitofp %{{.*}} : i64 to f64
// CHECK:      %[[TWICE:.*]] = llvm.fadd %[[F]], %[[F]] : f64
// CHECK:      %[[DIRECT:.*]] = llvm.sitofp %x : i64 to f64
// CHECK:      %[[NEG:.*]] = llvm.icmp "slt" %x, %{{.*}} : i64
// CHECK:      llvm.select %[[NEG]], %[[TWICE]], %[[DIRECT]] : i1, f64
func.func @unsigned_to_float(%x: i64) -> f64 {
  %0 = arith.uitofp %x : i64 to f64
  func.return %0 : f64
}

// -----

// Constants: index becomes i64, bf16 its bits, i1 a bool; they go to the top of the
// function, one per value.

// CHECK-LABEL: func.func @constants
// CHECK:      llvm.mlir.constant(7) : i64
// CHECK:      llvm.mlir.constant(16320 : i16) : i16
// CHECK:      llvm.mlir.constant(true) : i1
func.func @constants() -> (index, bf16, i1) {
  %0 = arith.constant 7 : index
  %1 = arith.constant 1.5 : bf16
  %2 = arith.constant true
  func.return %0, %1, %2 : index, bf16, i1
}

// -----

// Arith on tensors is outside the contract: a located error.

func.func @tensor_add(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// ERR: convert-arith-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'arith.addf' op operates on tensor<4xf32>; convert-arith-to-llvm lowers scalar ops only (run bufferize and convert-linalg-to-parallel-loops first)

// -----

// A dense constant should have become a memref.global in bufferize.

func.func @dense() -> tensor<2xf32> {
  %0 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// ERR: convert-arith-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'arith.constant' op dense constant of type tensor<2xf32> cannot be lowered by convert-arith-to-llvm; bufferize turns tensor constants into memref.global first

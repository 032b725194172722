// RUN: not irgrad-opt -p convert-index-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-index-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: sh -c 'irgrad-opt -p convert-index-to-llvm --split-input-file %s >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT
// RUN: not irgrad-opt -p convert-to-llvm --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=FULL

// index is i64 behind unrealized casts; the plain ops are one llvm op each (MLIR's
// IndexToLLVM), shifts included (a shift by 64 or more is poison, as in MLIR).

// CHECK-LABEL: func.func @trivial
// CHECK:      %[[B:.*]] = builtin.unrealized_conversion_cast %b : index to i64
// CHECK:      %[[A:.*]] = builtin.unrealized_conversion_cast %a : index to i64
// CHECK:      llvm.add %[[A]], %[[B]] : i64
// CHECK:      llvm.sub %[[A]], %[[B]] : i64
// CHECK:      llvm.mul %[[A]], %[[B]] : i64
// CHECK:      llvm.and %[[A]], %[[B]] : i64
// CHECK:      llvm.or %[[A]], %[[B]] : i64
// CHECK:      llvm.xor %[[A]], %[[B]] : i64
// CHECK:      llvm.shl %[[A]], %[[B]] : i64
// CHECK:      llvm.ashr %[[A]], %[[B]] : i64
// CHECK:      %[[SHRU:.*]] = llvm.lshr %[[A]], %[[B]] : i64
// CHECK:      %[[OUT:.*]] = builtin.unrealized_conversion_cast %[[SHRU]] : i64 to index
// CHECK:      func.return {{.*}}, %[[OUT]] : index
// CHECK-NOT:  index.

// The whole conversion leaves only llvm ops: the casts cancel.
// FULL-LABEL: llvm.func @trivial(%0: i64, %1: i64)
// FULL:       llvm.add %0, %1 : i64
// FULL-NOT:   unrealized_conversion_cast
// FULL-NOT:   index.
func.func @trivial(%a: index, %b: index) -> (index, index, index, index, index, index, index, index, index) {
  %0 = index.add %a, %b
  %1 = index.sub %a, %b
  %2 = index.mul %a, %b
  %3 = index.and %a, %b
  %4 = index.or %a, %b
  %5 = index.xor %a, %b
  %6 = index.shl %a, %b
  %7 = index.shrs %a, %b
  %8 = index.shru %a, %b
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8 : index, index, index, index, index, index, index, index, index
}

// -----

// max/min are LLVM's smax/umax/smin/umin intrinsics.

// CHECK-LABEL: func.func @min_max
// CHECK:      llvm.call_intrinsic "llvm.smax.i64"(%[[A:.*]], %[[B:.*]]) : (i64, i64) -> i64
// CHECK:      llvm.call_intrinsic "llvm.umax.i64"(%[[A]], %[[B]]) : (i64, i64) -> i64
// CHECK:      llvm.call_intrinsic "llvm.smin.i64"(%[[A]], %[[B]]) : (i64, i64) -> i64
// CHECK:      llvm.call_intrinsic "llvm.umin.i64"(%[[A]], %[[B]]) : (i64, i64) -> i64
func.func @min_max(%a: index, %b: index) -> (index, index, index, index) {
  %0 = index.maxs %a, %b
  %1 = index.maxu %a, %b
  %2 = index.mins %a, %b
  %3 = index.minu %a, %b
  func.return %0, %1, %2, %3 : index, index, index, index
}

// -----

// Divisions are convert-arith-to-llvm's lowering (integer_division): division never traps, a
// zero divisor, and a signed INT_MIN / -1, divide by 1 (the wrapped quotient, remainder 0).

// CHECK-LABEL: func.func @divisions
// CHECK:      %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:      %[[MIN:.*]] = llvm.mlir.constant(-9223372036854775808) : i64
// CHECK:      %[[NEG1:.*]] = llvm.mlir.constant(-1) : i64
// CHECK:      %[[B:.*]] = builtin.unrealized_conversion_cast %b : index to i64
// CHECK:      %[[A:.*]] = builtin.unrealized_conversion_cast %a : index to i64
// CHECK:      %[[BZ:.*]] = llvm.icmp "eq" %[[B]], %[[ZERO]] : i64
// CHECK:      %[[ISMIN:.*]] = llvm.icmp "eq" %[[A]], %[[MIN]] : i64
// CHECK:      %[[ISNEG1:.*]] = llvm.icmp "eq" %[[B]], %[[NEG1]] : i64
// CHECK:      %[[OVF:.*]] = llvm.and %[[ISMIN]], %[[ISNEG1]] : i1
// CHECK:      %[[UNSAFE:.*]] = llvm.or %[[BZ]], %[[OVF]] : i1
// CHECK:      %[[SAFE:.*]] = llvm.select %[[UNSAFE]], %[[ONE]], %[[B]] : i1, i64
// CHECK:      llvm.sdiv %[[A]], %[[SAFE]] : i64
// CHECK:      %[[NZU:.*]] = llvm.select %{{.*}}, %[[ONE]], %[[B]] : i1, i64
// CHECK:      llvm.udiv %[[A]], %[[NZU]] : i64
// CHECK:      llvm.srem %[[A]], %{{.*}} : i64
// CHECK:      llvm.urem %[[A]], %{{.*}} : i64
func.func @divisions(%a: index, %b: index) -> (index, index, index, index) {
  %0 = index.divs %a, %b
  %1 = index.divu %a, %b
  %2 = index.rems %a, %b
  %3 = index.remu %a, %b
  func.return %0, %1, %2, %3 : index, index, index, index
}

// -----

// ceildivs is not MLIR's expansion (whose -n wraps for n = INT_MIN): the truncating quotient
// q and remainder r, then q + 1 where r != 0 and r, m have one sign.

// CHECK-LABEL: func.func @ceildivs
// CHECK:      %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:      %[[SAFE:.*]] = llvm.select %{{.*}}, %[[ONE]], %{{.*}} : i1, i64
// CHECK:      %[[Q:.*]] = llvm.sdiv %[[N:.*]], %[[SAFE]] : i64
// CHECK:      %[[R:.*]] = llvm.srem %[[N]], %[[SAFE]] : i64
// CHECK:      %[[RNEG:.*]] = llvm.icmp "slt" %[[R]], %[[ZERO]] : i64
// CHECK:      %[[MNEG:.*]] = llvm.icmp "slt" %[[SAFE]], %[[ZERO]] : i64
// CHECK:      %[[SAME:.*]] = llvm.icmp "eq" %[[RNEG]], %[[MNEG]] : i1
// CHECK:      %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]], %[[ZERO]] : i64
// CHECK:      %[[UP:.*]] = llvm.and %[[INEXACT]], %[[SAME]] : i1
// CHECK:      %[[Q1:.*]] = llvm.add %[[Q]], %[[ONE]] : i64
// CHECK:      llvm.select %[[UP]], %[[Q1]], %[[Q]] : i1, i64
func.func @ceildivs(%n: index, %m: index) -> index {
  %0 = index.ceildivs %n, %m
  func.return %0 : index
}

// -----

// floordivs, the same way: q - 1 where r != 0 and r, m have other signs.

// CHECK-LABEL: func.func @floordivs
// CHECK:      %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:      %[[SAFE:.*]] = llvm.select %{{.*}}, %[[ONE]], %{{.*}} : i1, i64
// CHECK:      %[[Q:.*]] = llvm.sdiv %[[N:.*]], %[[SAFE]] : i64
// CHECK:      %[[R:.*]] = llvm.srem %[[N]], %[[SAFE]] : i64
// CHECK:      %[[RNEG:.*]] = llvm.icmp "slt" %[[R]], %[[ZERO]] : i64
// CHECK:      %[[MNEG:.*]] = llvm.icmp "slt" %[[SAFE]], %[[ZERO]] : i64
// CHECK:      %[[DIFF:.*]] = llvm.icmp "ne" %[[RNEG]], %[[MNEG]] : i1
// CHECK:      %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]], %[[ZERO]] : i64
// CHECK:      %[[DOWN:.*]] = llvm.and %[[INEXACT]], %[[DIFF]] : i1
// CHECK:      %[[Q1:.*]] = llvm.sub %[[Q]], %[[ONE]] : i64
// CHECK:      llvm.select %[[DOWN]], %[[Q1]], %[[Q]] : i1, i64
func.func @floordivs(%n: index, %m: index) -> index {
  %0 = index.floordivs %n, %m
  func.return %0 : index
}

// -----

// ceildivu: q + 1 where the remainder is not 0.

// CHECK-LABEL: func.func @ceildivu
// CHECK:      %[[ZERO:.*]] = llvm.mlir.constant(0) : i64
// CHECK:      %[[ONE:.*]] = llvm.mlir.constant(1) : i64
// CHECK:      %[[M:.*]] = builtin.unrealized_conversion_cast %m : index to i64
// CHECK:      %[[N:.*]] = builtin.unrealized_conversion_cast %n : index to i64
// CHECK:      %[[MZ:.*]] = llvm.icmp "eq" %[[M]], %[[ZERO]] : i64
// CHECK:      %[[SAFE:.*]] = llvm.select %[[MZ]], %[[ONE]], %[[M]] : i1, i64
// CHECK:      %[[Q:.*]] = llvm.udiv %[[N]], %[[SAFE]] : i64
// CHECK:      %[[R:.*]] = llvm.urem %[[N]], %[[SAFE]] : i64
// CHECK:      %[[INEXACT:.*]] = llvm.icmp "ne" %[[R]], %[[ZERO]] : i64
// CHECK:      %[[Q1:.*]] = llvm.add %[[Q]], %[[ONE]] : i64
// CHECK:      llvm.select %[[INEXACT]], %[[Q1]], %[[Q]] : i1, i64
func.func @ceildivu(%n: index, %m: index) -> index {
  %0 = index.ceildivu %n, %m
  func.return %0 : index
}

// -----

// index.cmp is llvm.icmp with the same predicate.

// CHECK-LABEL: func.func @cmp
// CHECK:      llvm.icmp "eq" %[[A:.*]], %[[B:.*]] : i64
// CHECK:      llvm.icmp "ne" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "slt" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "sle" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "sgt" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "sge" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "ult" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "ule" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "ugt" %[[A]], %[[B]] : i64
// CHECK:      llvm.icmp "uge" %[[A]], %[[B]] : i64
func.func @cmp(%a: index, %b: index) -> (i1, i1, i1, i1, i1, i1, i1, i1, i1, i1) {
  %0 = index.cmp eq(%a, %b)
  %1 = index.cmp ne(%a, %b)
  %2 = index.cmp slt(%a, %b)
  %3 = index.cmp sle(%a, %b)
  %4 = index.cmp sgt(%a, %b)
  %5 = index.cmp sge(%a, %b)
  %6 = index.cmp ult(%a, %b)
  %7 = index.cmp ule(%a, %b)
  %8 = index.cmp ugt(%a, %b)
  %9 = index.cmp uge(%a, %b)
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i1, i1, i1, i1, i1, i1, i1, i1, i1, i1
}

// -----

// Constants; sizeof is the index width, 64.

// CHECK-LABEL: func.func @constants
// CHECK:      %[[C:.*]] = llvm.mlir.constant(-3) : i64
// CHECK:      %[[T:.*]] = llvm.mlir.constant(true) : i1
// CHECK:      %[[F:.*]] = llvm.mlir.constant(false) : i1
// CHECK:      %[[W:.*]] = llvm.mlir.constant(64) : i64
// CHECK:      %[[CI:.*]] = builtin.unrealized_conversion_cast %[[C]] : i64 to index
// CHECK:      %[[WI:.*]] = builtin.unrealized_conversion_cast %[[W]] : i64 to index
// CHECK:      func.return %[[CI]], %[[T]], %[[F]], %[[WI]] : index, i1, i1, index
func.func @constants() -> (index, i1, i1, index) {
  %0 = index.constant -3
  %1 = index.bool.constant true
  %2 = index.bool.constant false
  %3 = index.sizeof
  func.return %0, %1, %2, %3 : index, i1, i1, index
}

// -----

// casts sign-extends, castu zero-extends; both truncate to a narrower type, and a cast
// between index and i64 is no op at all.

// CHECK-LABEL: func.func @casts
// CHECK:      %[[A:.*]] = builtin.unrealized_conversion_cast %a : index to i64
// CHECK:      llvm.sext %x : i32 to i64
// CHECK:      llvm.zext %x : i32 to i64
// CHECK:      llvm.trunc %[[A]] : i64 to i32
// CHECK:      llvm.trunc %[[A]] : i64 to i32
// CHECK:      %[[Y:.*]] = builtin.unrealized_conversion_cast %y : i64 to index
// CHECK:      llvm.zext %z : i1 to i64
// CHECK:      func.return {{.*}}, %[[Y]], {{.*}}, %[[A]] : index, index, i32, i32, index, index, i64
func.func @casts(%a: index, %x: i32, %y: i64, %z: i1) -> (index, index, i32, i32, index, index, i64) {
  %0 = index.casts %x : i32 to index
  %1 = index.castu %x : i32 to index
  %2 = index.casts %a : index to i32
  %3 = index.castu %a : index to i32
  %4 = index.casts %y : i64 to index
  %5 = index.castu %z : i1 to index
  %6 = index.castu %a : index to i64
  func.return %0, %1, %2, %3, %4, %5, %6 : index, index, i32, i32, index, index, i64
}

// -----

// The verifier rejects index ops on other types, with the op's location; exit status 1.

func.func @add_on_i32(%a: i32, %b: i32) -> index {
  %0 = "index.add"(%a, %b) : (i32, i32) -> index
  func.return %0 : index
}

// ERR: convert-index-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'index.add' op operand 'lhs' at position 0 does not verify: i32 should be of base attribute index

// -----

func.func @cast_without_index(%a: i32) -> i64 {
  %0 = index.casts %a : i32 to i64
  func.return %0 : i64
}

// ERR: convert-index-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'index.casts' op casts between index and an integer type: exactly one of i32 and i64 must be index

// -----

func.func @cmp_result(%a: index, %b: index) -> index {
  %0 = "index.cmp"(%a, %b) <{pred = #index<cmp_predicate slt>}> : (index, index) -> index
  func.return %0 : index
}

// ERR: convert-index-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'index.cmp' op result 'result' at position 0 does not verify: Expected attribute i1 but got index

// -----

// In the custom syntax the operands are index by construction: an i32 is a parse error.

func.func @custom_add_on_i32(%a: i32, %b: index) -> index {
  %0 = index.add %a, %b
  func.return %0 : index
}

// ERR: convert-index-to-llvm.mlir:[[# @LINE - 4]]:18: error: operand is used with type index, but has been previously used or defined with type i32

// EXIT: exit=1

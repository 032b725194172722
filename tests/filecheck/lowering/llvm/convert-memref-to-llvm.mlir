// RUN: not irgrad-opt -p convert-memref-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-memref-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// A memref is a bare pointer; load and store address it by sum(index * stride), the
// strides (8, 1) read from the type.

// CHECK-LABEL: func.func @load_store
// CHECK-DAG:  %[[EIGHT:.*]] = llvm.mlir.constant(8) : i64
// CHECK-DAG:  %[[P:.*]] = builtin.unrealized_conversion_cast %m : memref<4x8xf32> to !llvm.ptr
// CHECK-DAG:  %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK-DAG:  %[[J:.*]] = builtin.unrealized_conversion_cast %j : index to i64
// CHECK:      %[[ROW:.*]] = llvm.mul %[[I]], %[[EIGHT]] overflow<nsw> : i64
// CHECK:      %[[OFF:.*]] = llvm.add %[[ROW]], %[[J]] overflow<nsw> : i64
// CHECK:      %[[ADDR:.*]] = llvm.getelementptr inbounds %[[P]][%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:      %[[V:.*]] = llvm.load %[[ADDR]] : !llvm.ptr -> f32
// CHECK:      llvm.store %[[V]], %{{.*}} : f32, !llvm.ptr
func.func @load_store(%m: memref<4x8xf32>, %i: index, %j: index) {
  %v = memref.load %m[%i, %j] : memref<4x8xf32>
  memref.store %v, %m[%j, %i] : memref<4x8xf32>
  func.return
}

// -----

// A subview folds its (dynamic) offset into the pointer: %i * 8 + 2 elements; the view's
// strides [8, 2] come from its type.

// CHECK-LABEL: func.func @subview
// CHECK-DAG:  %[[TWO:.*]] = llvm.mlir.constant(2) : i64
// CHECK-DAG:  %[[EIGHT:.*]] = llvm.mlir.constant(8) : i64
// CHECK-DAG:  %[[I:.*]] = builtin.unrealized_conversion_cast %i : index to i64
// CHECK:      %[[ROW:.*]] = llvm.mul %[[I]], %[[EIGHT]] overflow<nsw> : i64
// CHECK:      %[[OFF:.*]] = llvm.add %[[ROW]], %[[TWO]] overflow<nsw> : i64
// CHECK:      %[[VIEW:.*]] = llvm.getelementptr inbounds %{{.*}}[%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:      %[[ADDR:.*]] = llvm.getelementptr inbounds %[[VIEW]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:      llvm.load %[[ADDR]] : !llvm.ptr -> f32
func.func @subview(%m: memref<4x8xf32>, %i: index, %k: index) -> f32 {
  %c1 = arith.constant 1 : index
  %s = memref.subview %m[%i, 2] [2, 3] [1, 2] : memref<4x8xf32> to memref<2x3xf32, strided<[8, 2], offset: ?>>
  %v = memref.load %s[%c1, %k] : memref<2x3xf32, strided<[8, 2], offset: ?>>
  func.return %v : f32
}

// -----

// alloc is a 64-byte aligned_alloc of the size rounded up to 64, dealloc a free; a copy
// between contiguous buffers is one llvm.memcpy.

// CHECK-LABEL: func.func @alloc_copy
// CHECK-DAG:  %[[ALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-DAG:  %[[SIZE:.*]] = llvm.mlir.constant(192) : i64
// CHECK-DAG:  %[[BYTES:.*]] = llvm.mlir.constant(132) : i64
// CHECK-DAG:  %[[SRC:.*]] = builtin.unrealized_conversion_cast %m : memref<3x11xf32> to !llvm.ptr
// CHECK:      %[[BUF:.*]] = llvm.call @aligned_alloc(%[[ALIGN]], %[[SIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK:      llvm.call_intrinsic "llvm.memcpy.p0.p0.i64"(%[[BUF]], %[[SRC]], %[[BYTES]], %{{.*}}) : (!llvm.ptr, !llvm.ptr, i64, i1) -> ()
// CHECK:      llvm.call @free(%[[BUF]]) : (!llvm.ptr) -> ()
// CHECK-DAG:  llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
// CHECK-DAG:  llvm.func @free(!llvm.ptr)
func.func @alloc_copy(%m: memref<3x11xf32>) {
  %a = memref.alloc() : memref<3x11xf32>
  "memref.copy"(%m, %a) : (memref<3x11xf32>, memref<3x11xf32>) -> ()
  memref.dealloc %a : memref<3x11xf32>
  func.return
}

// -----

// A strided copy is a loop nest of element loads and stores (scf.for: this pass runs
// before convert-scf-to-cf).

// CHECK-LABEL: func.func @strided_copy
// CHECK:      %[[SRC:.*]] = llvm.getelementptr inbounds %{{.*}}[9] : (!llvm.ptr) -> !llvm.ptr, f32
// CHECK:      scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:        scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:          %[[FROM:.*]] = llvm.getelementptr inbounds %[[SRC]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:          %[[TO:.*]] = llvm.getelementptr inbounds %{{.*}}[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK:          %[[V:.*]] = llvm.load %[[FROM]] : !llvm.ptr -> f32
// CHECK:          llvm.store %[[V]], %[[TO]] : f32, !llvm.ptr
// CHECK-NOT:  memref.copy
func.func @strided_copy(%m: memref<4x8xf32>, %out: memref<2x2xf32>) {
  %s = memref.subview %m[1, 1] [2, 2] [1, 2] : memref<4x8xf32> to memref<2x2xf32, strided<[8, 2], offset: 9>>
  "memref.copy"(%s, %out) : (memref<2x2xf32, strided<[8, 2], offset: 9>>, memref<2x2xf32>) -> ()
  func.return
}

// -----

// A static offset past 2^31 elements: the GEP's constant index would be an i32, so it is an
// i64 constant operand (an internal error before).
// CHECK-LABEL: func.func @far_subview
// CHECK:         %[[OFF:.*]] = llvm.mlir.constant(2147483648) : i64
// CHECK:         llvm.getelementptr inbounds %{{.*}}[%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, f32
func.func @far_subview(%m: memref<3000000000xf32>) -> f32 {
  %s = memref.subview %m[2147483648] [1] [1] : memref<3000000000xf32> to memref<1xf32, strided<[1], offset: 2147483648>>
  %c0 = arith.constant 0 : index
  %v = memref.load %s[%c0] : memref<1xf32, strided<[1], offset: 2147483648>>
  func.return %v : f32
}

// -----

// A global holds its elements in their storage type; get_global takes its address.

// CHECK:      llvm.mlir.global internal constant @table(dense<[5, 6, 7]> : tensor<3xi32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<3 x i32>
// CHECK-LABEL: func.func @global
// CHECK:      %[[G:.*]] = llvm.mlir.addressof @table : !llvm.ptr
// CHECK:      llvm.getelementptr inbounds %[[G]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, i32
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<3xi32>, initial_value = dense<[5, 6, 7]> : tensor<3xi32>, constant}> : () -> ()
func.func @global(%i: index) -> i32 {
  %g = memref.get_global @table : memref<3xi32>
  %v = memref.load %g[%i] : memref<3xi32>
  func.return %v : i32
}

// -----

// An i1 element is a byte (numpy's bool): loads test it, stores write 0 or 1.

// CHECK-LABEL: func.func @bools
// CHECK:      %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK:      %[[V:.*]] = llvm.icmp "ne" %[[B]], %{{.*}} : i8
// CHECK:      %[[W:.*]] = llvm.zext %[[V]] : i1 to i8
// CHECK:      llvm.store %[[W]], %{{.*}} : i8, !llvm.ptr
func.func @bools(%m: memref<4xi1>, %i: index) {
  %v = memref.load %m[%i] : memref<4xi1>
  memref.store %v, %m[%i] : memref<4xi1>
  func.return
}

// -----

// A small alloca goes to the function's entry block (a loop must not grow the stack); one
// above 64 KiB is heap memory freed before every return. Constants gather at the top.

// CHECK-LABEL: func.func @allocas
// CHECK-DAG:    %[[N:.*]] = llvm.mlir.constant(4) : i64
// CHECK-DAG:    %[[BIGALIGN:.*]] = llvm.mlir.constant(64) : i64
// CHECK-DAG:    %[[BIGSIZE:.*]] = llvm.mlir.constant(80000) : i64
// CHECK:        %[[BIG:.*]] = llvm.call @aligned_alloc(%[[BIGALIGN]], %[[BIGSIZE]]) : (i64, i64) -> !llvm.ptr
// CHECK:        %[[SMALL:.*]] = llvm.alloca %[[N]] x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
// CHECK:        scf.for
// CHECK:        llvm.call @free(%[[BIG]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:   func.return
func.func @allocas(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %small = memref.alloca() : memref<4xf32>
    memref.store %x, %small[%c0] : memref<4xf32>
  }
  %big = memref.alloca() : memref<20000xf32>
  memref.store %x, %big[%c0] : memref<20000xf32>
  func.return
}

// -----

// Dynamic shapes are outside the contract.

func.func @dynamic(%m: memref<?xf32>, %i: index) -> f32 {
  %v = memref.load %m[%i] : memref<?xf32>
  func.return %v : f32
}

// ERR: convert-memref-to-llvm.mlir:[[# @LINE - 4]]:3: error: 'memref.load' op has dynamic shape memref<?xf32>; convert-memref-to-llvm supports static shapes only

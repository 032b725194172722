// RUN: not irgrad-opt -p convert-func-to-llvm --split-input-file %s 2>/dev/null | filecheck %s
// RUN: not irgrad-opt -p convert-func-to-llvm --split-input-file %s 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// RUN: not irgrad-opt -p 'convert-func-to-llvm{packed-interface=false}' --split-input-file %s 2>/dev/null | filecheck %s --check-prefix=NOPACK

// NOPACK:     llvm.func @entry
// NOPACK-NOT: _irgrad_packed

// Functions keep their names; a memref argument is one pointer, index is i64, several
// results are a struct; a private function is internal; a declaration stays external.
// Every public function with a body gets the packed entry the runtime calls: slot k of
// the pointer array points at argument k's value (a memref's value is its data pointer,
// an i1 is a byte), and the result slots point at where the results go.

// CHECK-LABEL: builtin.module
// CHECK:      llvm.func internal @helper(%x: f32, %[[OUTP:.*]]: !llvm.ptr) -> !llvm.struct<(f32, i64)> {
// CHECK:        %out = builtin.unrealized_conversion_cast %[[OUTP]] : !llvm.ptr to memref<4xf32>
// CHECK:        %[[U:.*]] = llvm.mlir.undef : !llvm.struct<(f32, i64)>
// CHECK:        %[[S0:.*]] = llvm.insertvalue %x, %[[U]][0] : !llvm.struct<(f32, i64)>
// CHECK:        %[[S1:.*]] = llvm.insertvalue %{{.*}}, %[[S0]][1] : !llvm.struct<(f32, i64)>
// CHECK:        llvm.return %[[S1]] : !llvm.struct<(f32, i64)>

// CHECK:      llvm.func @entry(%{{.*}}: f32, %flag: i1, %[[P:.*]]: !llvm.ptr) -> f32 {
// CHECK:        %[[CALL:.*]] = llvm.call @helper(%{{.*}}, %[[P]]) : (f32, !llvm.ptr) -> !llvm.struct<(f32, i64)>
// CHECK:        %[[R:.*]] = llvm.extractvalue %[[CALL]][0] : !llvm.struct<(f32, i64)>
// CHECK:        llvm.return %[[R]] : f32

// CHECK:      llvm.func @_irgrad_packed_entry(%[[ARGS:.*]]: !llvm.ptr) {
// CHECK:        %[[SLOT0:.*]] = llvm.getelementptr inbounds %[[ARGS]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:        %[[X:.*]] = llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK:        %[[BYTE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i8
// CHECK:        %[[FLAG:.*]] = llvm.icmp "ne" %[[BYTE]], %{{.*}} : i8
// CHECK:        %[[SLOT2:.*]] = llvm.getelementptr inbounds %[[ARGS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:        %[[WORD:.*]] = llvm.load %[[SLOT2]] : !llvm.ptr -> !llvm.ptr
// CHECK:        %[[BUF:.*]] = llvm.load %[[WORD]] : !llvm.ptr -> !llvm.ptr
// CHECK:        %[[RES:.*]] = llvm.call @entry(%[[X]], %[[FLAG]], %[[BUF]]) : (f32, i1, !llvm.ptr) -> f32
// CHECK:        %[[SLOT3:.*]] = llvm.getelementptr inbounds %[[ARGS]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK:        %[[DEST:.*]] = llvm.load %[[SLOT3]] : !llvm.ptr -> !llvm.ptr
// CHECK:        llvm.store %[[RES]], %[[DEST]] : f32, !llvm.ptr
// CHECK:        llvm.return

// CHECK:      llvm.func @external(!llvm.ptr)
// CHECK-NOT:  _irgrad_packed_helper
// CHECK-NOT:  _irgrad_packed_external
func.func private @helper(%x: f32, %out: memref<4xf32>) -> (f32, index) {
  %c0 = arith.constant 0 : index
  memref.store %x, %out[%c0] : memref<4xf32>
  func.return %x, %c0 : f32, index
}
func.func @entry(%x: f32, %flag: i1, %out: memref<4xf32>) -> f32 {
  %r:2 = func.call @helper(%x, %out) : (f32, memref<4xf32>) -> (f32, index)
  func.return %r#0 : f32
}
func.func private @external(memref<4xf32>)

// -----

// MLIR's argument attributes (llvm.noalias, from split-large-functions) and no_inline carry
// over to the llvm.func, one llvm argument per argument; the LLVM IR translation turns them
// into `noalias` and `noinline` (tests/unit/lowering/loops/test_split_large_functions.py).
// CHECK-LABEL: llvm.func internal @part(%0: !llvm.ptr {llvm.noalias}, %1: i64) attributes {no_inline} {
// CHECK-LABEL: llvm.func @caller(
// CHECK-NOT:     llvm.noalias
// CHECK:         llvm.call @part(
func.func private @part(%a: memref<4xf32> {llvm.noalias}, %n: index) attributes {no_inline} {
  func.return
}
func.func @caller(%a: memref<4xf32>) {
  %c = arith.constant 1 : index
  func.call @part(%a, %c) : (memref<4xf32>, index) -> ()
  func.return
}

// -----

// Tensors in a signature mean bufferize has not run: a located error.

func.func @tensor_arg(%t: tensor<4xf32>) {
  func.return
}

// ERR: convert-func-to-llvm.mlir:[[# @LINE - 4]]:1: error: 'func.func' op has a tensor<4xf32> in its signature; convert-func-to-llvm takes scalars, memrefs and !llvm.ptr only (run bufferize first)

// RUN: irgrad-opt -p symbol-dce %s --split-input-file | filecheck %s

// symbol-dce erases the private symbols that no public symbol and no non-symbol op reaches,
// through any symbol reference (func.call, autodiff.grad, memref.get_global, ...); public
// symbols always stay.

// A dead private function goes, and so does a chain of them (@chain_b is dead, so @chain_a,
// used only by it, is too); a private function a public one calls stays.

// CHECK-LABEL: builtin.module {
// CHECK-NOT:   @dead
// CHECK-NOT:   @chain_a
// CHECK-NOT:   @chain_b
// CHECK:       func.func private @used()
// CHECK:       func.func @public() {
// CHECK-NEXT:    func.call @used() : () -> ()
// CHECK:       func.func @public_unused() {
// CHECK-NOT:   func.func
func.func private @dead() {
  func.return
}
func.func private @chain_a() {
  func.return
}
func.func private @chain_b() {
  func.call @chain_a() : () -> ()
  func.return
}
func.func private @used() {
  func.return
}
func.func @public() {
  func.call @used() : () -> ()
  func.return
}
func.func @public_unused() {
  func.return
}

// -----

// Transitive uses: private @f is used only by private @g, which public @h uses: both stay.

// CHECK-LABEL: builtin.module {
// CHECK:       func.func private @f()
// CHECK:       func.func private @g()
// CHECK-NEXT:    func.call @f() : () -> ()
// CHECK:       func.func @h()
func.func private @f() {
  func.return
}
func.func private @g() {
  func.call @f() : () -> ()
  func.return
}
func.func @h() {
  func.call @g() : () -> ()
  func.return
}

// -----

// A function an autodiff request names is used (@loss, by autodiff.grad; @block, by the
// autodiff.checkpoint in @loss), as is a global a get_global reads; the unused global goes.

// CHECK-LABEL: builtin.module {
// CHECK:       func.func private @block(
// CHECK:       func.func private @loss(
// CHECK-NEXT:    autodiff.checkpoint @block(
// CHECK:       memref.global "private" constant @table : memref<3xi32>
// CHECK-NOT:   @unused_table
// CHECK:       func.func @entry(
// CHECK-NEXT:    autodiff.grad @loss(
// CHECK-NEXT:    memref.get_global @table
func.func private @block(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = nn.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func private @loss(%x: tensor<4xf32>) -> tensor<f32> {
  %y = autodiff.checkpoint @block(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %s = nn.reduce_sum %y axes = [0] : tensor<4xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<3xi32>, initial_value = dense<[5, 6, 7]> : tensor<3xi32>, constant}> : () -> ()
"memref.global"() <{sym_name = "unused_table", sym_visibility = "private", type = memref<3xi32>, initial_value = dense<[1, 2, 3]> : tensor<3xi32>, constant}> : () -> ()
func.func @entry(%x: tensor<4xf32>) -> (tensor<4xf32>, memref<3xi32>) {
  %g = autodiff.grad @loss(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %t = memref.get_global @table : memref<3xi32>
  func.return %g, %t : tensor<4xf32>, memref<3xi32>
}

// -----

// A nested module is a symbol table of its own: a reference inside it names its symbols, not
// the outer module's. Its dead private @helper goes although the outer @helper is used, and
// its @kept stays; the outer private @helper stays, used by the outer @main; the outer
// private @orphan goes although a function inside the nested module has the same name.

// CHECK-LABEL: builtin.module {
// CHECK:       func.func private @helper()
// CHECK-NOT:   @orphan
// CHECK:       builtin.module @inner {
// CHECK-NOT:     @helper
// CHECK:         func.func private @orphan()
// CHECK:         func.func private @kept()
// CHECK:         func.func @inner_main()
// CHECK-NEXT:      func.call @orphan() : () -> ()
// CHECK-NEXT:      func.call @kept() : () -> ()
// CHECK:       }
// CHECK:       func.func @main()
// CHECK-NEXT:    func.call @helper() : () -> ()
// CHECK-NOT:   @orphan
func.func private @helper() {
  func.return
}
func.func private @orphan() {
  func.return
}
builtin.module @inner {
  func.func private @helper() {
    func.return
  }
  func.func private @orphan() {
    func.return
  }
  func.func private @kept() {
    func.return
  }
  func.func @inner_main() {
    func.call @orphan() : () -> ()
    func.call @kept() : () -> ()
    func.return
  }
}
func.func @main() {
  func.call @helper() : () -> ()
  func.return
}

// -----

// A private nested module nothing references goes with everything in it, public or not.

// CHECK-LABEL: builtin.module {
// CHECK-NOT:   @gone
// CHECK-NOT:   @inside
// CHECK:       func.func @stays()
module @gone attributes {sym_visibility = "private"} {
  func.func @inside() {
    func.return
  }
}
func.func @stays() {
  func.return
}

// -----

// Nested visibility: @public_module's symbols are hidden from outside the (hidden) top-level
// module, so its dead nested-visibility @dead_nested goes; @nested_fn, called from outside
// by its nested reference, stays, and so does the private @private_fn it calls, resolved in
// @public_module's table. Any SymbolRefAttr is a use, here one in a discardable attribute.

// CHECK-LABEL: builtin.module {
// CHECK:       builtin.module @public_module {
// CHECK-NOT:     @dead_nested
// CHECK:         func.func private @private_fn()
// CHECK:         func.func nested @nested_fn()
// CHECK:       func.func @user() attributes {uses = [@public_module::@nested_fn]}
builtin.module @public_module {
  func.func nested @dead_nested() {
    func.return
  }
  func.func private @private_fn() {
    func.return
  }
  func.func nested @nested_fn() {
    func.call @private_fn() : () -> ()
    func.return
  }
}
func.func @user() attributes {uses = [@public_module::@nested_fn]} {
  func.return
}

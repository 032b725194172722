// RUN: irgrad-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each case breaks one rule of debug.print's verifier; the CHECK line is the diagnostic.

func.func @too_few_positional(%x: tensor<3xf32>) {
  debug.print "{} and {}"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op the format string '{} and {}' has 2 positional fields, but the op has 1 positional operands

// -----

func.func @unknown_name(%x: tensor<3xf32>) {
  debug.print "{x} {w}"(%x) {names = ["x"]} : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op the format string '{x} {w}' names w, which no operand is called

// -----

func.func @malformed(%x: tensor<3xf32>) {
  debug.print "{"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op bad format string '{': Single '{' encountered in format string

// -----

func.func @mixed_numbering(%x: tensor<3xf32>) {
  debug.print "{} {0}"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op bad format string '{} {0}': cannot switch between automatic field numbering and manual field specification

// -----

func.func @names_count(%x: tensor<3xf32>) {
  debug.print "{}"(%x) {names = ["", "y"]} : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op 'names' has 2 entries for 1 operands

// -----

func.func @scalar(%s: f32) {
  debug.print "{}"(%s) : f32
  func.return
}
// CHECK: 'debug.print' op operand #0 must be a tensor or a memref, got f32

// -----

func.func @too_many(%x: tensor<f32>) {
  debug.print ""(%x, %x, %x, %x, %x, %x, %x, %x, %x) : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
  func.return
}
// CHECK: 'debug.print' op takes at most 8 operands, got 9

// -----

// A format reaches only the operands' values: no attribute (a way to os.environ through
// __globals__), item, or nested field doing either.
func.func @attribute(%x: tensor<3xf32>) {
  debug.print "{0.__class__.__init__.__globals__}"(%x) : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op bad format string '{0.__class__.__init__.__globals__}': the field {0.__class__.__init__.__globals__} reads an attribute or item of an operand: a format may only format the operands' values

// -----

func.func @item(%x: tensor<3xf32>) {
  debug.print "{x[0]}"(%x) {names = ["x"]} : tensor<3xf32>
  func.return
}
// CHECK: 'debug.print' op bad format string '{x[0]}': the field {x[0]} reads an attribute or item

// -----

func.func @nested(%x: tensor<3xf32>, %w: tensor<i64>) {
  debug.print "{x:{w.real}}"(%x, %w) {names = ["x", "w"]} : tensor<3xf32>, tensor<i64>
  func.return
}
// CHECK: 'debug.print' op bad format string '{x:{w.real}}': the field {w.real} reads an attribute or item

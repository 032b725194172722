// RUN: irgrad-opt %s --split-input-file --verify-diagnostics

// Each case breaks one rule of debug.print's verifier; the expected-error annotation is the diagnostic.

func.func @too_few_positional(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op the format string '{} and {}' has 2 positional fields, but the op has 1 positional operands}}
  debug.print "{} and {}"(%x) : tensor<3xf32>
  func.return
}

// -----

func.func @unknown_name(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op the format string '{x} {w}' names w, which no operand is called}}
  debug.print "{x} {w}"(%x) {names = ["x"]} : tensor<3xf32>
  func.return
}

// -----

func.func @malformed(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op bad format string '{': Single '{' encountered in format string}}
  debug.print "{"(%x) : tensor<3xf32>
  func.return
}

// -----

func.func @mixed_numbering(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op bad format string '{} {0}': cannot switch between automatic field numbering and manual field specification}}
  debug.print "{} {0}"(%x) : tensor<3xf32>
  func.return
}

// -----

func.func @names_count(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op 'names' has 2 entries for 1 operands}}
  debug.print "{}"(%x) {names = ["", "y"]} : tensor<3xf32>
  func.return
}

// -----

func.func @scalar(%s: f32) {
  // expected-error @+1 {{'debug.print' op operand #0 must be a tensor or a memref, got f32}}
  debug.print "{}"(%s) : f32
  func.return
}

// -----

func.func @too_many(%x: tensor<f32>) {
  // expected-error @+1 {{'debug.print' op takes at most 8 operands, got 9}}
  debug.print ""(%x, %x, %x, %x, %x, %x, %x, %x, %x) : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
  func.return
}

// -----

// A format reaches only the operands' values: no attribute (a way to os.environ through
// __globals__), item, or nested field doing either.
func.func @attribute(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op bad format string '{0.__class__.__init__.__globals__}': the field {0.__class__.__init__.__globals__} reads an attribute or item of an operand: a format may only format the operands' values}}
  debug.print "{0.__class__.__init__.__globals__}"(%x) : tensor<3xf32>
  func.return
}

// -----

func.func @item(%x: tensor<3xf32>) {
  // expected-error @+1 {{'debug.print' op bad format string '{x[0]}': the field {x[0]} reads an attribute or item}}
  debug.print "{x[0]}"(%x) {names = ["x"]} : tensor<3xf32>
  func.return
}

// -----

func.func @nested(%x: tensor<3xf32>, %w: tensor<i64>) {
  // expected-error @+1 {{'debug.print' op bad format string '{x:{w.real}}': the field {w.real} reads an attribute or item}}
  debug.print "{x:{w.real}}"(%x, %w) {names = ["x", "w"]} : tensor<3xf32>, tensor<i64>
  func.return
}

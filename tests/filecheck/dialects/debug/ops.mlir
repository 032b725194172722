// RUN: irgrad-opt %s | filecheck %s
// RUN: irgrad-opt %s | irgrad-opt | filecheck %s
// RUN: irgrad-opt %s --print-op-generic | irgrad-opt | filecheck %s
// RUN: irgrad-opt %s -p canonicalize,cse,dce | filecheck %s --check-prefix=KEPT

// debug.print round-trips in its custom form: tensors or memrefs, positional and named
// operands, none at all. It has side effects: canonicalize, cse and dce keep every one,
// even two identical prints in a row and a print of a value nothing else uses.

// CHECK-LABEL: func.func @tensors
// CHECK:       debug.print "x = {} y = {y}"(%x, %y) {names = ["", "y"]} : tensor<3xf32>, tensor<f64>
// CHECK:       debug.print "hello"()
// CHECK:       debug.print "hello"()
// CHECK:       debug.print "{}"(%z) : tensor<3xf32>
// KEPT-LABEL:  func.func @tensors
// KEPT-COUNT-2: debug.print "hello"()
// KEPT:        %z = nn.add
// KEPT-NEXT:   debug.print "{}"(%z) : tensor<3xf32>
func.func @tensors(%x: tensor<3xf32>, %y: tensor<f64>) {
  debug.print "x = {} y = {y}"(%x, %y) {names = ["", "y"]} : tensor<3xf32>, tensor<f64>
  debug.print "hello"()
  debug.print "hello"()
  %z = nn.add %x, %x : tensor<3xf32>
  debug.print "{}"(%z) : tensor<3xf32>
  func.return
}

// CHECK-LABEL: func.func @memrefs
// CHECK:       debug.print "{0} {0:} {1}"(%a, %b) : memref<2x2xi32>, memref<i1>
func.func @memrefs(%a: memref<2x2xi32>, %b: memref<i1>) {
  debug.print "{0} {0:} {1}"(%a, %b) : memref<2x2xi32>, memref<i1>
  func.return
}

// nn-expand-factorizations on nn.eig, which has no reference loop: in every mode but
// outline=false a call of a private declaration tagged kind "geev" (convert-factorizations-to-lapack
// gives it its body; the interpreter runs it as numpy.linalg.eig); outline=false (the GPU
// pipeline) refuses it, naming the op, and writes nothing.
// RUN: irgrad-opt %s -p nn-expand-factorizations | filecheck %s
// RUN: irgrad-opt %s -p 'nn-expand-factorizations{references=false}' | filecheck %s
// RUN: not irgrad-opt %s -p 'nn-expand-factorizations{outline=false}' 2>&1 | filecheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @eig
// CHECK-NEXT:    %w, %v = func.call @irgrad_geev_2x4x4xf64(%a) : (tensor<2x4x4xf64>) -> (tensor<2x4x2xf64>, tensor<2x4x4x2xf64>)
// CHECK-NEXT:    %w2, %v2 = func.call @irgrad_geev_2x4x4xf64(%a) : (tensor<2x4x4xf64>) -> (tensor<2x4x2xf64>, tensor<2x4x4x2xf64>)
// CHECK-NEXT:    %l = func.call @irgrad_potrf_2x4x4xf64(%a)
// CHECK-NOT:     nn.eig
// CHECK:       func.func private @irgrad_geev_2x4x4xf64(tensor<2x4x4xf64>) -> (tensor<2x4x2xf64>, tensor<2x4x4x2xf64>) attributes {irgrad.factorization = {kind = "geev", lower = false, unit_diagonal = false}}
// CHECK-NOT:     func.func private @irgrad_geev
// CHECK-NOT:     nn.eig

// GPU: error: 'nn.eig' op nn-expand-factorizations{outline=false}: nn.eig of 2x4x4xf64 has no reference loop to inline: it runs only on the CPU (LAPACK's geev) and in the interpreter
// GPU-NOT: func.func
func.func @eig(%a: tensor<2x4x4xf64>) -> (tensor<2x4x2xf64>, tensor<2x4x4x2xf64>, tensor<2x4x4xf64>) {
  %w, %v = nn.eig %a : (tensor<2x4x4xf64>) -> (tensor<2x4x2xf64>, tensor<2x4x4x2xf64>)
  %w2, %v2 = nn.eig %a : (tensor<2x4x4xf64>) -> (tensor<2x4x2xf64>, tensor<2x4x4x2xf64>)
  %l = nn.cholesky %a : (tensor<2x4x4xf64>) -> tensor<2x4x4xf64>
  func.return %w2, %v, %l : tensor<2x4x2xf64>, tensor<2x4x4x2xf64>, tensor<2x4x4xf64>
}

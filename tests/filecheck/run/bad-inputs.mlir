// RUN: python -c "import numpy as np; np.save('%t.good.npy', np.zeros((2, 3), np.float32)); np.save('%t.shape.npy', np.zeros((3, 2), np.float32)); np.save('%t.dtype.npy', np.zeros((2, 3), np.float64)); np.savez('%t.archive.npz', a=np.zeros(2))"
// RUN: not irgrad-run %s --input %t.shape.npy 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not irgrad-run %s --input %t.dtype.npy 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: not irgrad-run %s 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not irgrad-run %s --input %t.good.npy --input %t.good.npy 2>&1 | filecheck %s --check-prefix=COUNT2
// RUN: not irgrad-run %s --input %t.missing.npy 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not irgrad-run %s --input %t.archive.npz 2>&1 | filecheck %s --check-prefix=ARCHIVE
// RUN: not irgrad-run %s --entry nope --input %t.good.npy 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: sh -c 'irgrad-run %s --input %t.shape.npy >/dev/null 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=EXIT

// Inputs that do not match the signature, missing files and an unknown entry are one-line
// diagnostics with exit code 1, never a traceback (an unavailable GPU:
// tests/filecheck/gpu/irgrad-run-gpu-unavailable.mlir).

func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.exp %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// SHAPE-NOT:  Traceback
// SHAPE:      irgrad-run: error: argument #0: expected tensor<2x3xf32>, got shape (3, 2) and dtype float32
// DTYPE:      irgrad-run: error: argument #0: expected tensor<2x3xf32>, got shape (2, 3) and dtype float64
// COUNT:      irgrad-run: error: @main takes 1 argument(s), got 0 --input file(s)
// COUNT2:     irgrad-run: error: @main takes 1 argument(s), got 2 --input file(s)
// MISSING:    irgrad-run: error: could not read input #0 '{{.*}}missing.npy': No such file or directory
// ARCHIVE:    irgrad-run: error: input #0 '{{.*}}archive.npz' is not a .npy array (an .npz archive?)
// ENTRY:      irgrad-run: error: no function @nope in the module (functions: @main)
// EXIT:       exit=1

// RUN: not irgrad-opt --split-input-file %s 2>&1 | filecheck %s
// RUN: irgrad-opt --split-input-file --verify-diagnostics %s | filecheck %s --check-prefix=VERIFY

// With --split-input-file every chunk is processed, an error in one does not stop the next,
// and line numbers count from the top of the file.

func.func @first() {
  func.return
}

// -----

func.func @second(%x: i32) -> i64 {
  func.return %x : i32
}

// -----

func.func @third() {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}split-input-file.mlir:14:3: error: 'func.return' op Expected arguments
// CHECK-NOT: Traceback

// VERIFY:      func.func @first()
// VERIFY:      // -----
// VERIFY-NEXT: {{.*}}split-input-file.mlir:14:3: error: 'func.return' op Expected arguments
// VERIFY-NEXT:   func.return %x : i32
// VERIFY:      // -----
// VERIFY:      func.func @third()

// RUN: not irgrad-opt --split-input-file %s 2>&1 | filecheck %s
// RUN: irgrad-opt --split-input-file --verify-diagnostics %s | filecheck %s --check-prefix=VERIFY

// With --split-input-file every chunk is processed, an error in one does not stop the next,
// and line numbers count from the top of the file. With --verify-diagnostics each chunk is
// checked against its own expected-error annotations: the second chunk's error is expected,
// so nothing is printed for it and the run succeeds.

func.func @first() {
  func.return
}

// -----

func.func @second(%x: i32) -> i64 {
  // expected-error @+1 {{'func.return' op Expected arguments}}
  func.return %x : i32
}

// -----

func.func @third() {
  func.return
}

// CHECK-NOT: Traceback
// CHECK: {{.*}}split-input-file.mlir:17:3: error: 'func.return' op Expected arguments
// CHECK-NOT: Traceback

// VERIFY:      func.func @first()
// VERIFY:      // -----
// VERIFY-NEXT: // -----
// VERIFY:      func.func @third()

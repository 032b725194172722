// RUN: irgrad-opt --list-passes | filecheck %s

// --list-passes needs no input: every pass, sorted, with its description.

// CHECK:      Passes:
// CHECK:      canonicalize {{ *}}Applies all canonicalization patterns.
// CHECK:      convert-scf-to-cf {{ *}}Lower `scf.for` and `scf.if` to unstructured control flow.
// CHECK:      cse
// CHECK-NOT:  Traceback

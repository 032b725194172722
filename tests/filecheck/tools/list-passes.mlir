// RUN: irgrad-opt --list-passes | filecheck %s

// --list-passes needs no input: every pass, sorted, with its description.

// CHECK:      Passes:
// CHECK:      canonicalize {{ *}}Applies all canonicalization patterns.
// CHECK:      convert-scf-to-cf {{ *}}Lower scf.for/if/index_switch (xDSL's patterns) and scf.while to cf branches.
// CHECK:      cse
// CHECK-NOT:  Traceback

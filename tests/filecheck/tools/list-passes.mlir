// RUN: irgrad-opt --list-passes | filecheck %s
// RUN: irgrad-opt --help | filecheck %s --check-prefix=HELP

// --list-passes needs no input: irgrad's passes first, then xDSL's, each sorted, with its
// description and its options (the pass dataclass's fields: type and default), then the
// named pipelines.

// CHECK:      irgrad passes:
// CHECK:      autodiff {{ *}}Expand autodiff requests
// CHECK:      checkpoint-chain {{ *}}Split functions
// CHECK-NEXT:   --segments=<int> (default: 0)
// CHECK:      convert-parallel-loops-to-gpu
// CHECK-NEXT:   --block-size=<int> (default: 256)
// CHECK-NEXT:   --points-per-thread=<int> (default: 0)
// CHECK-NEXT:   --split-reductions=<bool> (default: true)
// CHECK:      xDSL passes:
// CHECK:      canonicalize {{ *}}Applies all canonicalization patterns.
// CHECK:      convert-scf-to-cf {{ *}}Lower `scf.for` and `scf.if` to unstructured control flow.
// CHECK:      cse
// CHECK:      Pipelines:
// CHECK:      irgrad-cpu
// CHECK-NOT:  Traceback

// --help names the flags, not the hundreds of passes (--list-passes does).
// HELP:     --pass-pipeline PASS_PIPELINE
// HELP-NOT: convert-scf-to-cf
// HELP-NOT: linalg-generalize-named-ops

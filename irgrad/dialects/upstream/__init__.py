"""Ops of upstream MLIR's own dialects that xDSL 0.75 lacks, so that IR written or printed by
upstream `mlir-opt` reads into irgrad.

Each module defines the missing ops with upstream's syntax and semantics and a dialect that is
xDSL's plus those ops, registered under the upstream name in irgrad's context
(irgrad/context.py): `arith` (remf, index_castui), `tensor` (generate), `linalg` (map,
batch_matmul, matvec, dot). `linalg-generalize-upstream-ops` rewrites the linalg ones and
`tensor.generate` into `linalg.generic`, which the rest of the pipeline lowers.
"""

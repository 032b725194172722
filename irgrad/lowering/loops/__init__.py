"""Stage "loops": linalg on memrefs to scf loops, BLAS and LAPACK calls (docs/design/cpu-pipeline.md)."""

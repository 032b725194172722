"""Stage "llvm": scf loops, memrefs and calls to the llvm dialect, one `convert-x-to-llvm` pass per dialect."""

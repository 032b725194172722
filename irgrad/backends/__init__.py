"""Execution backends: the numpy reference interpreter, the CPU JIT and the GPU runtime."""

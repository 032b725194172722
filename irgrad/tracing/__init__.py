"""The tracing core: Python functions to `nn` IR, below the passes and the library.

A `Tracer` stands for an SSA value of the function being traced (tracer.py, which also turns
captured numpy values into `nn` constants); `primitives` emits one `nn` op per call on tracers
of matching types (JAX's `lax` layer). The core imports only the dialects, so a pass may build
reference code on it: numpy's broadcasting and promotion (`broadcasting`), the few numpy-style
functions such code needs (`elementwise`, `reductions`, `gathers`, `matrices`, `loops`'
fori_loop, `sorting`) and the factorizations' `reference_loops`, all as calls (Tracer's
operators are the library's). The numpy-style library (irgrad/numpy/, irgrad/lax/, irgrad/nn/,
irgrad/scipy/) is built on top, wraps these, and installs Tracer's operators.
"""

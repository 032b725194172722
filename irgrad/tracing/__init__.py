"""The tracing core: Python functions to `nn` IR, below the passes and the library.

A `Tracer` stands for an SSA value of the function being traced; `primitives` emits one `nn`
op per call on tracers of matching types (JAX's `lax` layer), `constants` turns captured
numpy values into ops. It imports only the dialects, so a pass may build reference code on it;
the numpy-style library (irgrad/numpy/, irgrad/lax/, irgrad/nn/, irgrad/scipy/) is built on top.
"""

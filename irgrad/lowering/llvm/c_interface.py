"""Names the generated code and its callers agree on, in a module that imports nothing.

Why a module of its own: `convert-func-to-llvm` emits the packed entry points and the CPU
backend's argument marshalling (irgrad/backends/cpu/abi.py) looks them up; the backend must
not import the lowering pass (and through it xDSL's llvm dialect, a costly import) to learn
a name when it loads a cached object.
"""

PACKED_PREFIX = "_irgrad_packed_"
"""`@_irgrad_packed_f(ptr args)`: f with every argument and result behind one pointer array."""

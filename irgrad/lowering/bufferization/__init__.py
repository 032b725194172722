"""The pieces of `bufferize` (irgrad/lowering/bufferization/bufferize.py, which explains the strategy).

- `model`: roots and buffers (what memory a tensor value lives in), function signatures,
  constant globals, memref type helpers;
- `liveness`: whether a tensor may be read after an op (the in-place question);
- `core`: the per-function state and the decisions shared by every conversion: where an op
  writes, when a buffer may change owner;
- `tensor_ops`, `linalg_ops`, `control_flow`: the conversions, by category of op;
- `deallocation`: one `memref.dealloc` per owned buffer, after its last use.
"""

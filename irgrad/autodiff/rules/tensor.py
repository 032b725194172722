"""Rules for tensor element access: not supported yet.

`tensor.extract` of an active float tensor would need `tensor.insert` into zeros as its adjoint (and the
reverse); both are a later milestone. Extracting integers (indices for `nn.dynamic_slice`, say) is never
active and works.
"""

from __future__ import annotations

from xdsl.dialects import tensor

from irgrad.autodiff.registry import not_supported_yet

not_supported_yet(
    "element access on differentiated tensors is a later milestone (use nn.dynamic_slice / "
    "nn.dynamic_update_slice, which have rules)",
    tensor.ExtractOp,
    tensor.InsertOp,
)

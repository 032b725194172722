"""The `debug` dialect: printing values from inside compiled programs (jax.debug.print).

`debug.print "x = {} and {y}"(%a, %b) {names = ["", "y"]} : tensor<3xf32>, tensor<f64>`
prints, each time it runs, Python's `format` of its format string with the operands as numpy
arrays: positionally, or by keyword where `names` gives the operand a name (an empty name is
positional; no `names` means all positional). Operands are tensors before bufferization and
memrefs after it (the op reads them); a scalar is a rank-0 tensor.

The op has a side effect and no results: nothing may erase, duplicate, hoist or merge it
(it declares no memory effects, which xDSL's DCE and CSE take as "has effects"). Autodiff
keeps it in the primal computation: it is printed once per evaluation of the function it is
in (a gradient evaluates the forward once, a higher derivative once per level), and it
never contributes to a derivative. Under vmap it prints the batched operands, the batch on
axis 0, once (JAX's behaviour). Backends: the interpreter formats the values directly; the
CPU backend lowers the op to a call of `irgrad_debug_print_<n>(spec, ptr...)` that the
runtime binds to a Python callback (irgrad/backends/debug_print.py); `spec` is a constant
string of the object code, so programs that print are disk-cached. The GPU backend
runs it on the host: the operands' device buffers are copied back after the kernels that
write them (irgrad/backends/gpu/host_code.py).
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, MemRefType, StringAttr, TensorType
from xdsl.ir import Dialect, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

MAX_OPERANDS = 8
"""The most operands one `debug.print` takes (the CPU runtime has one entry point per count)."""


def format_fields(fmt: str) -> tuple[int, set[str]]:
    """How many positional fields `fmt` has and which names it uses; ValueError if malformed,
    if it mixes automatic and manual numbering (as `str.format` would), or if a field reads an
    attribute or item of an operand (`{0.__class__}`, `{x[0]}`): a format string from an IR
    file must not reach into live objects (os.environ through `__globals__`)."""
    positional, names, auto, manual = 0, set(), False, False
    fields: list[str] = []

    def collect(text: str, depth: int) -> None:
        for _, field, spec, _ in string.Formatter().parse(text):
            if field is None:
                continue
            fields.append(field)
            if spec and "{" in spec and depth < 2:
                collect(spec, depth + 1)  # a nested field, as in "{:{width}}"

    collect(fmt, 0)
    for field in fields:
        head = field.split(".")[0].split("[")[0]
        if head != field:
            raise ValueError(
                f"the field {{{field}}} reads an attribute or item of an operand: a format may only "
                "format the operands' values")
        if head == "":
            auto = True
            positional += 1
        elif head.isdigit():
            manual = True
            positional = max(positional, int(head) + 1)
        else:
            names.add(head)
    if auto and manual:
        raise ValueError("cannot switch between automatic field numbering and manual field specification")
    return positional, names


@irdl_op_definition
class PrintOp(IRDLOperation):
    """Print the operands through a Python format string each time the op runs."""

    name = "debug.print"
    format = prop_def(StringAttr)
    names = opt_prop_def(ArrayAttr[StringAttr])
    inputs = var_operand_def()
    assembly_format = "$format `(` $inputs `)` attr-dict (`:` type($inputs)^)?"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, fmt: str, inputs: Sequence[SSAValue], names: Sequence[str] | None = None):
        properties: dict = {"format": StringAttr(fmt)}
        if names is not None and any(names):
            properties["names"] = ArrayAttr([StringAttr(n) for n in names])
        super().__init__(operands=[list(inputs)], properties=properties)

    def operand_names(self) -> list[str]:
        """One name per operand, "" for the positional ones."""
        if self.names is None:
            return [""] * len(self.inputs)
        return [n.data for n in self.names.data]

    def verify_(self) -> None:
        if len(self.inputs) > MAX_OPERANDS:
            raise VerifyException(f"takes at most {MAX_OPERANDS} operands, got {len(self.inputs)}")
        for k, v in enumerate(self.inputs):
            if not isinstance(v.type, TensorType | MemRefType):
                raise VerifyException(f"operand #{k} must be a tensor or a memref, got {v.type}")
        if self.names is not None and len(self.names.data) != len(self.inputs):
            raise VerifyException(
                f"'names' has {len(self.names.data)} entries for {len(self.inputs)} operands"
            )
        names = self.operand_names()
        try:
            positional, used = format_fields(self.format.data)
        except ValueError as err:
            raise VerifyException(f"bad format string {self.format.data!r}: {err}") from None
        given = sum(1 for n in names if not n)
        if positional > given:
            raise VerifyException(
                f"the format string {self.format.data!r} has {positional} positional fields, "
                f"but the op has {given} positional operands"
            )
        missing = sorted(used - set(names))
        if missing:
            raise VerifyException(
                f"the format string {self.format.data!r} names {', '.join(missing)}, "
                f"which no operand is called"
            )


Debug = Dialect("debug", [PrintOp], [])

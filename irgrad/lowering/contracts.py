"""Checkers for the stage contracts of docs/design/cpu-pipeline.md, one function per stage.

Why: each pass of the CPU pipeline promises the next one a form of IR; a checker turns that
promise into a test (`assert_stage_linalg(module)` after `convert-nn-to-linalg`) and into a
debugging aid (`irgrad-opt` users can call it on any module). A violation raises
`ContractError` located at the first offending op, naming the stage and the rule it breaks.
Add the checker of a new stage here, next to the others, as `assert_stage_<name>`.
"""

from __future__ import annotations

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, ShapedType
from xdsl.dialects.linalg import ops as linalg_ops
from xdsl.ir import Operation, SSAValue

from irgrad.diagnostics import IrgradError


class ContractError(IrgradError):
    """IR that breaks a stage contract of the CPU pipeline."""

    def __init__(self, stage: str, op: Operation, message: str) -> None:
        self.op = op
        super().__init__(f"'{op.name}' op breaks the \"{stage}\" stage contract: {message}", op.location)


# ---------------------------------------------------------------------------------------------
# Stage "linalg": the output of convert-nn-to-linalg
# ---------------------------------------------------------------------------------------------

LINALG_STAGE_OPS = frozenset(
    {
        "builtin.module",
        "func.func",
        "func.call",
        "func.return",
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.yield",
        "scf.condition",
        "debug.print",
        "tensor.empty",
        "tensor.extract",
        "tensor.insert",
        "tensor.from_elements",
        "tensor.extract_slice",
        "tensor.insert_slice",
        "tensor.collapse_shape",
        "tensor.expand_shape",
        "tensor.reshape",
        "linalg.generic",
        "linalg.fill",
        "linalg.matmul",
        "linalg.transpose",
        "linalg.broadcast",
        "linalg.reduce",
        "linalg.yield",
        "linalg.index",
    }
)
"""Ops allowed at stage "linalg" besides scalar `arith.*` and `math.*`."""

_LINALG_OPS_WITH_OUTS = (
    linalg_ops.GenericOp,
    linalg_ops.FillOp,
    linalg_ops.MatmulOp,
    linalg_ops.TransposeOp,
    linalg_ops.BroadcastOp,
    linalg_ops.ReduceOp,
)


def _is_shaped(value: SSAValue) -> bool:
    return isinstance(value.type, ShapedType)


def _is_destination(value: SSAValue) -> bool:
    """A `tensor.empty`, or a `linalg.fill` of one (a reduction's initialized accumulator)."""
    owner = value.owner
    if isinstance(owner, tensor.EmptyOp):
        return True
    if isinstance(owner, linalg_ops.FillOp):
        return all(isinstance(out.owner, tensor.EmptyOp) for out in owner.outputs)
    return False


def _check_linalg_stage_op(op: Operation) -> str | None:
    """Why `op` may not appear at stage "linalg", or None when it may."""
    name = op.name
    if name.startswith(("arith.", "math.")):
        if name == "arith.constant":
            value = op.properties.get("value")
            if _is_shaped(op.results[0]) and not isinstance(value, DenseIntOrFPElementsAttr):
                return "a tensor constant must hold a dense elements attribute"
            return None
        if any(_is_shaped(v) for v in (*op.operands, *op.results)):
            return "arith and math ops must be scalar (elementwise tensor math is a linalg.generic)"
        return None
    if name not in LINALG_STAGE_OPS:
        if name.startswith("nn."):
            return "no nn op may remain (convert-nn-to-linalg lowers them all)"
        return "is not allowed at this stage"
    if isinstance(op, tensor.ExtractSliceOp | tensor.InsertSliceOp):
        if op.sizes:
            return "slice sizes must be static"
        if op.strides or any(s < 1 for s in op.static_strides.get_values()):
            return "slice strides must be static and at least 1"
    if isinstance(op, tensor.ReshapeOp):
        if not isinstance(op.shape.owner, arith.ConstantOp):
            return "the shape operand of tensor.reshape must be a constant"
    if isinstance(op, _LINALG_OPS_WITH_OUTS):
        for out in op.outputs:
            if not _is_destination(out):
                return (
                    "its outs operand must be a tensor.empty or a linalg.fill of one "
                    "(destination-passing style)"
                )
    return None


def assert_stage_linalg(module: ModuleOp) -> None:
    """Check that `module` is in stage "linalg" form (the output of convert-nn-to-linalg).

    Raises `ContractError` at the first op that is not allowed there: an `nn` or `autodiff` op,
    tensor-valued arith/math, a dynamic or non-positive slice stride or size, a reshape with a
    computed shape, or a linalg op whose `outs` is not a `tensor.empty` or a fill of one.
    """
    for op in module.walk():
        problem = _check_linalg_stage_op(op)
        if problem is not None:
            raise ContractError("linalg", op, problem)


__all__ = ["LINALG_STAGE_OPS", "ContractError", "assert_stage_linalg"]


# ---------------------------------------------------------------------------------------------
# Stages "bufferized" and "loops": the outputs of bufferize and convert-linalg-to-parallel-loops
# ---------------------------------------------------------------------------------------------

_BUFFER_STAGE_COMMON_OPS = frozenset(
    {
        "builtin.module",
        "func.func",
        "func.call",
        "func.return",
        "scf.for",
        "scf.if",
        "scf.while",
        "scf.yield",
        "scf.condition",
        "memref.alloc",
        "memref.dealloc",
        "memref.copy",
        "memref.subview",
        "memref.load",
        "memref.store",
        "memref.collapse_shape",
        "memref.expand_shape",
        "memref.global",
        "memref.get_global",
        "debug.print",
    }
)

BUFFERIZED_STAGE_OPS = _BUFFER_STAGE_COMMON_OPS | {
    "linalg.generic",
    "linalg.fill",
    "linalg.matmul",
    "linalg.transpose",
    "linalg.broadcast",
    "linalg.reduce",
    "linalg.yield",
    "linalg.index",
}
"""Ops allowed at stage "bufferized" besides scalar `arith.*` and `math.*`."""

LOOPS_STAGE_OPS = _BUFFER_STAGE_COMMON_OPS | {"scf.parallel", "scf.reduce", "scf.reduce.return"}
"""Ops allowed at stage "loops" besides scalar `arith.*` and `math.*`."""


def _memref_type_problem(t: object) -> str | None:
    """Why a type may not appear on a buffer-stage value, or None."""
    from xdsl.dialects.builtin import MemRefType, NoneAttr, StridedLayoutAttr, TensorType

    if isinstance(t, TensorType):
        return f"no tensor value may remain, found {t}"
    if isinstance(t, MemRefType):
        if any(d < 0 for d in t.get_shape()):
            return f"memref shapes must be static, found {t}"
        if isinstance(t.layout, StridedLayoutAttr):
            if any(s is None for s in t.layout.get_strides()):
                return f"memref strides must be static, found {t}"
        elif not isinstance(t.layout, NoneAttr):
            return f"memref layouts must be the identity or strided, found {t}"
    return None


def _check_buffer_stage_op(op: Operation, allowed: frozenset[str]) -> str | None:
    from xdsl.dialects import func, memref
    from xdsl.dialects.builtin import MemRefType, NoneAttr, TensorType

    name = op.name
    if name.startswith(("arith.", "math.")):
        if any(isinstance(v.type, TensorType | MemRefType) for v in (*op.operands, *op.results)):
            return "arith and math ops must be scalar"
    elif name not in allowed:
        return "is not allowed at this stage"
    if isinstance(op, func.FuncOp):
        for t in (*op.function_type.inputs, *op.function_type.outputs):
            if (problem := _memref_type_problem(t)) is not None:
                return problem
        if any(isinstance(t, MemRefType) for t in op.function_type.outputs):
            return "functions return buffers through out-parameters, not results"
        for t in op.function_type.inputs:
            if isinstance(t, MemRefType) and not isinstance(t.layout, NoneAttr):
                return f"function arguments have identity layouts, found {t}"
    values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
    for v in values:
        if (problem := _memref_type_problem(v.type)) is not None:
            return problem
    if isinstance(op, memref.AllocOp) and not isinstance(op.memref.type.layout, NoneAttr):
        return "allocations have identity layouts"
    if isinstance(op, memref.SubviewOp) and (op.sizes or op.strides):
        return "subview sizes and strides must be static"
    if name.startswith("linalg.") and name != "linalg.index" and op.results:
        return "linalg ops work on buffers and have no results"
    return None


def check_buffer_ownership(module: ModuleOp, stage: str = "bufferized") -> None:
    """Statically check that every buffer is freed exactly once on every path, after its uses.

    The ownership discipline of bufferize (irgrad/lowering/bufferization/bufferize.py): a block owns the
    `memref.alloc`s it holds, the memref results of the `scf` ops it holds, and (in an `scf.for`
    body or an `scf.while` region) its memref arguments. Each owned buffer is released exactly
    once by an op of that very block: a `memref.dealloc`, its terminator (`scf.yield`,
    `scf.condition`: ownership goes to the receiving region or result) or an `scf.for`/
    `scf.while` init operand (ownership goes into the loop). Nothing uses the buffer or a view of
    it after its release. Function arguments, globals and views are never released. Raises
    `ContractError` at the op that breaks the rule.
    """
    from xdsl.dialects import memref, scf
    from xdsl.dialects.builtin import MemRefType
    from xdsl.ir import Block, BlockArgument

    views = (memref.SubviewOp, memref.CollapseShapeOp, memref.ExpandShapeOp, memref.CastOp)

    def aliases(value: SSAValue) -> list[SSAValue]:
        found = [value]
        for v in found:
            for use in v.uses:
                if isinstance(use.operation, views) and use.index == 0:
                    found.extend(use.operation.results)
        return found

    def is_release(use_op: Operation, index: int) -> bool:
        if isinstance(use_op, memref.DeallocOp):
            return True
        if isinstance(use_op, scf.YieldOp | scf.ConditionOp):
            return True
        if isinstance(use_op, scf.ForOp):
            return index >= 3
        return isinstance(use_op, scf.WhileOp)

    def ancestor_in(op: Operation, block: Block) -> Operation | None:
        current: Operation | None = op
        while current is not None:
            parent = current.parent_block()
            if parent is block:
                return current
            current = parent.parent_op() if parent is not None else None
        return None

    owned: list[tuple[SSAValue, Block, Operation]] = []
    for op in module.walk():
        block = op.parent_block()
        if block is None:
            continue
        if isinstance(op, memref.AllocOp) or isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp):
            owned.extend((r, block, op) for r in op.results if isinstance(r.type, MemRefType))
        if isinstance(op, scf.ForOp | scf.WhileOp):
            for region in op.regions:
                args = region.block.args[1:] if isinstance(op, scf.ForOp) else region.block.args
                owned.extend((a, region.block, op) for a in args if isinstance(a.type, MemRefType))

    owned_values = {v for v, _, _ in owned}
    for op in module.walk():
        for index, operand in enumerate(op.operands):
            if isinstance(operand.type, MemRefType) and is_release(op, index):
                if operand not in owned_values:
                    raise ContractError(
                        stage, op, f"releases operand #{index}, a buffer it does not own"
                    )

    for value, block, where in owned:
        positions = {o: i for i, o in enumerate(block.ops)}
        releases: list[Operation] = []
        last_use: Operation | None = None
        for alias in aliases(value):
            for use in alias.uses:
                user = ancestor_in(use.operation, block)
                if user is None:
                    raise ContractError(
                        stage, use.operation, "uses a buffer outside the block that owns it"
                    )
                if is_release(use.operation, use.index):
                    if alias is not value:
                        raise ContractError(stage, use.operation, "releases a view of a buffer")
                    if user is not use.operation:
                        raise ContractError(
                            stage,
                            use.operation,
                            "releases a buffer that an enclosing block owns (a leak or a double "
                            "free on the other paths)",
                        )
                    releases.append(user)
                elif last_use is None or positions[user] > positions[last_use]:
                    last_use = user
        name = "an argument" if isinstance(value, BlockArgument) else "a buffer"
        if not releases:
            raise ContractError(stage, where, f"{name} it owns or makes is never freed (a leak)")
        if len(releases) > 1:
            raise ContractError(stage, releases[1], f"frees or moves {name} a second time")
        release = releases[0]
        if last_use is not None and positions[last_use] >= positions[release]:
            if last_use is release:
                raise ContractError(stage, release, "uses a buffer inside the op that releases it")
            raise ContractError(stage, last_use, "uses a buffer after it is freed or moved")


def _assert_buffer_stage(module: ModuleOp, stage: str, allowed: frozenset[str]) -> None:
    for op in module.walk():
        problem = _check_buffer_stage_op(op, allowed)
        if problem is not None:
            raise ContractError(stage, op, problem)
    check_buffer_ownership(module, stage)


def assert_stage_bufferized(module: ModuleOp) -> None:
    """Check that `module` is in stage "bufferized" form (the output of bufferize).

    Raises `ContractError` at the first op that breaks the contract: a tensor value left, an op
    outside the stage (a tensor op, an `nn` op), tensor or memref arith, a linalg op with
    results, a dynamic shape or stride, a non-identity allocation or function argument, a
    function returning a buffer, or a buffer not freed exactly once after its last use
    (`check_buffer_ownership`).
    """
    _assert_buffer_stage(module, "bufferized", BUFFERIZED_STAGE_OPS)


def assert_stage_loops(module: ModuleOp) -> None:
    """Check that `module` is in stage "loops" form (the output of convert-linalg-to-parallel-loops).

    As "bufferized", except that no linalg op may remain and `scf.parallel`/`scf.reduce` may
    appear.
    """
    _assert_buffer_stage(module, "loops", LOOPS_STAGE_OPS)


__all__ += [  # pyright: ignore[reportUnsupportedDunderAll]
    "BUFFERIZED_STAGE_OPS",
    "LOOPS_STAGE_OPS",
    "assert_stage_bufferized",
    "assert_stage_loops",
    "check_buffer_ownership",
]


# ---------------------------------------------------------------------------------------------
# Stage "llvm": the output of convert-to-llvm
# ---------------------------------------------------------------------------------------------

from xdsl.ir import Attribute  # noqa: E402


def _llvm_type_problem(t: Attribute) -> str | None:
    """Why a value of type `t` may not appear at stage "llvm", or None when it may."""
    from xdsl.dialects import llvm
    from xdsl.dialects.builtin import (
        Float16Type,
        Float32Type,
        Float64Type,
        IntegerType,
        Signedness,
    )

    if isinstance(t, IntegerType):
        return None if t.signedness.data == Signedness.SIGNLESS else f"{t} is not signless"
    if isinstance(t, Float16Type | Float32Type | Float64Type):
        return None
    if isinstance(t, llvm.LLVMPointerType | llvm.LLVMVoidType | llvm.LLVMArrayType):
        return None
    if isinstance(t, llvm.LLVMStructType):
        for element in t.types.data:
            if (problem := _llvm_type_problem(element)) is not None:
                return problem
        return None
    return f"values of type {t} must be converted (index to i64, bf16 to i16, memref to !llvm.ptr)"


def assert_stage_llvm(module: ModuleOp) -> None:
    """Check that `module` is in stage "llvm" form (the output of convert-to-llvm).

    Only `builtin.module` and `llvm` dialect ops, every value of an LLVM type (signless
    integers, f16, f32, f64, `!llvm.ptr`, structs and arrays of them), no
    `builtin.unrealized_conversion_cast` left. Raises `ContractError` at the first op that
    breaks a rule.
    """
    # An op left unlowered first: the casts around it are only its symptom.
    for op in module.walk():
        if op is module or op.name.startswith("llvm."):
            continue
        if op.name != "builtin.unrealized_conversion_cast":
            raise ContractError(
                "llvm",
                op,
                "only llvm dialect ops may remain (convert-to-llvm lowers the scf, cf, "
                'memref, arith, math and func ops of stage "loops")',
            )
    for op in module.walk():
        if op.name == "builtin.unrealized_conversion_cast":
            source = op.operands[0].type if op.operands else "()"
            raise ContractError(
                "llvm",
                op,
                f"a cast from {source} to {op.results[0].type} remains: a value of a "
                "non-llvm type is still used or defined",
            )
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            problem = _llvm_type_problem(value.type)
            if problem is not None:
                raise ContractError("llvm", op, problem)


__all__ += ["assert_stage_llvm"]  # noqa: PLE0605

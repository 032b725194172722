"""What every `nn` op module shares: element-type predicates, the `NNOperation` base class,
operand checks, and the table of canonicalization patterns.

`NNOperation` checks that operands and results are static tensors of irgrad's element types, then
compares the result type with the one the op infers (`expected_result_type`), so builders and
verifiers cannot disagree. An op with canonicalization patterns declares the
`RegisteredCanonicalization` trait; canonicalization.py fills the table that trait reads, after the
ops are defined, so no op module imports the patterns that build its ops.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, traits_def
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException


FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
INT_WIDTHS = (1, 32, 64)
INDEX_INT_WIDTHS = (32, 64)

Value = SSAValue | Operation


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_complex(t: Attribute) -> bool:
    """complex<f32> or complex<f64>: the element types of complex64 and complex128 arrays."""
    return isinstance(t, ComplexType) and isinstance(t.get_element_type(), (Float32Type, Float64Type))


def is_signless_int(t: Attribute, widths: Sequence[int]) -> bool:
    """A signless integer of one of `widths` bits (si32 and ui32 are not irgrad types)."""
    return (
        isinstance(t, IntegerType)
        and t.width.data in widths
        and t.signedness.data == Signedness.SIGNLESS
    )


def is_int(t: Attribute) -> bool:
    """Signless integers irgrad tensors may hold; i1 counts (it is the boolean type)."""
    return is_signless_int(t, INT_WIDTHS)


def is_bool(t: Attribute) -> bool:
    return is_signless_int(t, (1,))


def shape_str(t: Attribute) -> str:
    """`4x3` for tensor<4x3xf32>, `scalar` for rank 0: the spelling verifier messages use."""
    if isinstance(t, TensorType):
        shape = t.get_shape()
        return "x".join(str(d) for d in shape) if shape else "scalar"
    return str(t)


def tensor(shape: Sequence[int], element_type: Attribute) -> TensorType:
    return TensorType(element_type, list(shape))


def _type_of(value: Value) -> Attribute:
    return SSAValue.get(value).type


def _ints(attr: DenseArrayBase) -> tuple[int, ...]:
    return cast(tuple[int, ...], attr.get_values())


def _i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


def _i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(int(value), i64)


class NNOperation(IRDLOperation, ABC):
    """Base of every `nn` op: checks tensor types, then compares the result with `infer_type`."""

    traits = traits_def(Pure())

    # Whether the op takes complex<f32>/complex<f64> tensors too. Those that do are the ops
    # `nn-expand-complex` rewrites into real ones (docs/dialects/nn.md, "Complex numbers").
    COMPLEX: ClassVar[bool] = False

    def error(self, message: str) -> VerifyException:
        return VerifyException(f"'{self.name}' op {message}")

    def verify_(self) -> None:
        for kind, values in (("operand", self.operands), ("result", self.results)):
            for index, value in enumerate(values):
                t = value.type
                if not isinstance(t, TensorType):
                    continue
                element = t.get_element_type()
                if is_complex(element) and not self.COMPLEX:
                    raise self.error(f"{kind} #{index} has element type {element}; {self.name} takes no complex values")
                if not (is_float(element) or is_int(element) or is_complex(element)):
                    raise self.error(
                        f"{kind} #{index} has element type {element}; nn tensors hold "
                        "f16, bf16, f32, f64, i1, i32, i64, complex<f32> or complex<f64>"
                    )
                if any(d < 0 for d in t.get_shape()):
                    raise self.error(f"{kind} #{index} has a dynamic shape {t}; nn shapes are static")
        self.verify_semantics()
        expected = self.expected_result_type()
        if expected is not None and self.results[0].type != expected:
            raise self.error(
                f"result type {self.results[0].type} does not match the inferred type {expected}"
            )

    def verify_semantics(self) -> None:
        """Op-specific checks beyond shape inference (element type rules and such)."""

    def expected_result_type(self) -> Attribute | None:
        """The result type `infer_type` gives for this op's operands and properties."""
        return None


def _check_float(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    """A float element type, or a complex one where the op takes complex values."""
    assert isinstance(t, TensorType)
    element = t.get_element_type()
    if not (is_float(element) or (op.COMPLEX and is_complex(element))):
        kind = "a floating-point or complex" if op.COMPLEX else "a floating-point"
        raise op.error(f"{what} must have {kind} element type, got {t}")


def _check_numeric(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if is_bool(t.get_element_type()):
        raise op.error(f"{what} must be numeric (not i1), got {t}")


def _check_int(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if not is_int(t.get_element_type()):
        raise op.error(f"{what} must have an integer element type (i1, i32 or i64), got {t}")


def _check_wide_int(op: NNOperation, t: Attribute, what: str = "operand") -> None:
    assert isinstance(t, TensorType)
    if not is_signless_int(t.get_element_type(), INDEX_INT_WIDTHS):
        raise op.error(f"{what} must have element type i32 or i64, got {t}")


def check_axes(
    op: NNOperation, axes: Sequence[int], rank: int, what: str = "axes", of: str = "operand"
) -> None:
    for a in axes:
        if not 0 <= a < rank:
            raise op.error(f"{what} {list(axes)} out of range for {of} of rank {rank}")
    if len(set(axes)) != len(axes):
        raise op.error(f"{what} {list(axes)} contain duplicates")


CANONICALIZATION_PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {}
"""Each op type's canonicalization patterns, filled by irgrad/dialects/nn/canonicalization.py."""


class RegisteredCanonicalization(HasCanonicalizationPatternsTrait):
    """The patterns `canonicalize` applies to an op: its entry in CANONICALIZATION_PATTERNS."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        return CANONICALIZATION_PATTERNS.get(op, ())

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return tuple(p for patterns in CANONICALIZATION_PATTERNS.values() for p in patterns)

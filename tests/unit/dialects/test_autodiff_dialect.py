"""The `autodiff` dialect's Python builders infer result types, and its verifiers reject malformed requests."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

import pytest
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    IndexType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnrankedTensorType,
    f32,
    f64,
    i1,
    i32,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from irgrad.dialects.autodiff import (
    Autodiff,
    CheckpointOp,
    CustomVJPOp,
    GradOp,
    JVPOp,
    StopGradientOp,
    ValueAndGradOp,
    VJPOp,
    is_differentiable_type,
    is_scalar_loss_type,
    wrt_attr,
)

VEC3 = TensorType(f32, [3])
VEC2 = TensorType(f32, [2])
MAT = TensorType(f32, [3, 2])
SCALAR = TensorType(f32, [])

OpT = TypeVar("OpT", bound=Operation)


def declare(name: str, inputs: Sequence[Attribute], outputs: Sequence[Attribute]) -> FuncOp:
    return FuncOp.external(name, inputs, outputs)


class Harness:
    """A module holding callee declarations and a `@main` block whose arguments feed the op under test."""

    def __init__(self, callees: Sequence[FuncOp], arg_types: Sequence[Attribute]):
        self.main = FuncOp("main", (arg_types, []))
        self.block = self.main.body.block
        self.ret = ReturnOp()
        self.block.add_op(self.ret)
        self.module = ModuleOp([*callees, self.main])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return self.block.args

    def add(self, op: OpT) -> OpT:
        self.block.insert_op_before(op, self.ret)
        return op

    def verify(self) -> None:
        self.module.verify()


def verify_error(harness: Harness, message: str) -> None:
    with pytest.raises(VerifyException, match=re.escape(message)):
        harness.verify()


def test_dialect_lists_every_op():
    names = {op.name for op in Autodiff.operations}
    assert names == {
        "autodiff.grad",
        "autodiff.value_and_grad",
        "autodiff.vjp",
        "autodiff.jvp",
        "autodiff.batch",
        "autodiff.stop_gradient",
        "autodiff.custom_vjp",
        "autodiff.custom_jvp",
        "autodiff.checkpoint",
    }


@pytest.mark.parametrize(
    ("type", "differentiable", "scalar_loss"),
    [
        (f32, True, True),
        (f64, True, True),
        (Float16Type(), True, True),
        (BFloat16Type(), True, True),
        (SCALAR, True, True),
        (VEC3, True, False),
        (UnrankedTensorType(f32), True, False),
        (i32, False, False),
        (i1, False, False),
        (IndexType(), False, False),
        (TensorType(i1, [3]), False, False),
        (TensorType(i32, []), False, False),
    ],
)
def test_type_predicates(type: Attribute, differentiable: bool, scalar_loss: bool):
    assert is_differentiable_type(type) == differentiable
    assert is_scalar_loss_type(type) == scalar_loss


# --- builders infer result types --------------------------------------------------------------------------------


def test_grad_builder_infers_one_gradient_per_wrt_index():
    loss = declare("loss", [VEC3, MAT, i32], [SCALAR])
    h = Harness([loss], [VEC3, MAT, i32])
    default = h.add(GradOp(loss, h.args))
    both = h.add(GradOp(loss, h.args, wrt=[0, 1]))
    h.verify()
    assert default.result_types == (VEC3,)
    assert default.wrt == wrt_attr([0])
    assert both.result_types == (VEC3, MAT)
    assert both.wrt_indices == (0, 1)
    assert str(both.callee) == "@loss"


def test_value_and_grad_builder_puts_the_value_first():
    loss = declare("loss", [VEC3, MAT], [f32])
    h = Harness([loss], [VEC3, MAT])
    op = h.add(ValueAndGradOp(loss, h.args, wrt=[1]))
    h.verify()
    assert op.result_types == (f32, MAT)
    assert op.value.type == f32
    assert op.gradients.types == (MAT,)


def test_vjp_builder_and_result_split():
    f = declare("f", [VEC3, MAT], [VEC2, f32])
    h = Harness([f], [VEC3, MAT, VEC2, f32])
    x, w, dy, ds = h.args
    op = h.add(VJPOp(f, [x, w], [dy, ds], wrt=[0, 1]))
    h.verify()
    assert op.result_types == (VEC2, f32, VEC3, MAT)
    assert [v.type for v in op.outputs] == [VEC2, f32]
    assert [v.type for v in op.arg_cotangents] == [VEC3, MAT]
    assert tuple(op.args) == (x, w)
    assert tuple(op.cotangents) == (dy, ds)


def test_jvp_builder_and_result_split():
    f = declare("f", [VEC3, MAT], [VEC2])
    h = Harness([f], [VEC3, MAT])
    x, w = h.args
    op = h.add(JVPOp(f, [x, w], [w], wrt=[1]))
    h.verify()
    assert op.result_types == (VEC2, VEC2)
    assert [v.type for v in op.outputs] == [VEC2]
    assert [v.type for v in op.output_tangents] == [VEC2]
    assert tuple(op.tangents) == (w,)


def test_stop_gradient_builder_keeps_the_type():
    h = Harness([], [VEC3, i32])
    a = h.add(StopGradientOp(h.args[0]))
    b = h.add(StopGradientOp(h.args[1]))
    h.verify()
    assert a.result.type == VEC3
    assert b.result.type == i32


def test_custom_vjp_and_checkpoint_builders_return_the_callee_results():
    f = declare("f", [VEC3], [VEC2, f32])
    fwd = declare("f_fwd", [VEC3], [VEC2, f32, MAT])
    bwd = declare("f_bwd", [MAT, VEC2, f32], [VEC3])
    h = Harness([f, fwd, bwd], [VEC3])
    custom = h.add(CustomVJPOp(f, fwd, bwd, h.args))
    checkpoint = h.add(CheckpointOp(f, h.args))
    h.verify()
    assert custom.result_types == (VEC2, f32)
    assert (str(custom.fwd), str(custom.bwd)) == ("@f_fwd", "@f_bwd")
    assert checkpoint.result_types == (VEC2, f32)


# --- builders refuse what they cannot type ---------------------------------------------------------------------


def test_builder_rejects_out_of_range_wrt():
    loss = declare("loss", [VEC3], [f32])
    h = Harness([loss], [VEC3])
    message = "'autodiff.grad' op wrt index 1 out of range: @loss has 1 argument"
    with pytest.raises(VerifyException, match=re.escape(message)):
        GradOp(loss, h.args, wrt=[1])


def test_builder_rejects_integer_wrt():
    f = declare("f", [VEC3, i32], [VEC2])
    h = Harness([f], [VEC3, i32, VEC2])
    x, n, dy = h.args
    with pytest.raises(VerifyException, match=re.escape("argument #1 of @f: i32 is not a floating-point type")):
        VJPOp(f, [x, n], [dy], wrt=[1])


def test_builder_rejects_non_scalar_loss():
    f = declare("f", [VEC3], [VEC3])
    h = Harness([f], [VEC3])
    message = "'autodiff.value_and_grad' op callee @f must return exactly one float scalar or rank-0 float tensor"
    with pytest.raises(VerifyException, match=re.escape(message)):
        ValueAndGradOp(f, h.args)


# --- verifiers ---------------------------------------------------------------------------------------------------


def test_unknown_callee():
    loss = declare("loss", [VEC3], [f32])
    h = Harness([], [VEC3])  # @loss is not in the module
    h.add(GradOp(loss, h.args))
    verify_error(h, "'autodiff.grad' op callee @loss does not reference a symbol in the nearest symbol table")


def test_op_outside_any_symbol_table():
    loss = declare("loss", [VEC3], [f32])
    block = Block(arg_types=[VEC3])
    op = GradOp(loss, block.args)
    block.add_op(op)
    message = "'autodiff.grad' op callee @loss cannot be resolved: the op is not inside a symbol table"
    with pytest.raises(VerifyException, match=re.escape(message)):
        op.verify()


def test_callee_must_be_a_function():
    loss = declare("loss", [VEC3], [f32])
    h = Harness([ModuleOp([], sym_name=StringAttr("loss"))], [VEC3])  # a symbol named @loss that is not a function
    h.add(GradOp(loss, h.args))
    verify_error(h, "'autodiff.grad' op callee @loss does not reference a func.func, but a 'builtin.module'")


def test_operand_count_and_type():
    loss = declare("loss", [VEC3, VEC3], [f32])
    h = Harness([loss], [VEC3, VEC2])
    h.add(GradOp(loss, h.args[:1]))
    verify_error(h, "'autodiff.grad' op incorrect number of arguments: expected 2 (inputs of @loss), got 1")

    loss = declare("loss", [VEC3, VEC3], [f32])
    h = Harness([loss], [VEC3, VEC2])
    h.add(GradOp(loss, h.args))
    verify_error(
        h, "'autodiff.grad' op argument #1 type mismatch: expected tensor<3xf32> (inputs of @loss), got tensor<2xf32>"
    )


@pytest.mark.parametrize(
    ("wrt", "message"),
    [
        ([0, 0], "'autodiff.grad' op wrt index 0 appears more than once in [0, 0]"),
        ([1, 0], "'autodiff.grad' op wrt indices must be sorted in increasing order, got [1, 0]"),
        ([], "'autodiff.grad' op wrt must list at least one argument index"),
    ],
)
def test_wrt_list_shape(wrt: list[int], message: str):
    loss = declare("loss", [VEC3, VEC3], [f32])
    h = Harness([loss], [VEC3, VEC3])
    h.add(GradOp(loss, h.args, wrt=wrt))
    verify_error(h, message)


def test_wrt_out_of_range_and_integer_are_verifier_errors_too():
    loss = declare("loss", [VEC3, TensorType(i1, [3])], [f32])
    h = Harness([loss], [VEC3, TensorType(i1, [3])])
    op = h.add(GradOp(loss, h.args))
    op.properties["wrt"] = wrt_attr([1])
    verify_error(
        h,
        "'autodiff.grad' op cannot differentiate with respect to argument #1 of @loss: "
        "tensor<3xi1> is not a floating-point type (f16, bf16, f32, f64 or a tensor of them)",
    )
    op.properties["wrt"] = wrt_attr([2])
    verify_error(h, "'autodiff.grad' op wrt index 2 out of range: @loss has 2 arguments")


def test_grad_of_non_scalar_function():
    f = declare("f", [VEC3], [VEC3])
    h = Harness([f], [VEC3])
    h.add(GradOp.create(operands=h.args, result_types=[VEC3], properties={"callee": SymbolRefAttr("f")}))
    verify_error(
        h,
        "'autodiff.grad' op callee @f must return exactly one float scalar or rank-0 float tensor, "
        "but returns (tensor<3xf32>)",
    )


def test_result_types_are_checked():
    loss = declare("loss", [VEC3, MAT], [SCALAR])
    h = Harness([loss], [VEC3, MAT])
    props = {"callee": SymbolRefAttr("loss"), "wrt": wrt_attr([0, 1])}
    h.add(GradOp.create(operands=h.args, result_types=[VEC3, VEC3], properties=props))
    verify_error(
        h,
        "'autodiff.grad' op result #1 type mismatch: expected tensor<3x2xf32> "
        "(one gradient per wrt index of @loss), got tensor<3xf32>",
    )


def test_vjp_cotangents_match_the_callee_results():
    f = declare("f", [VEC3], [VEC2])
    h = Harness([f], [VEC3, VEC2])
    x, dy = h.args
    op = h.add(VJPOp(f, [x], [dy]))
    op.operands = [x, x]  # the cotangent now has the argument's type, not the result's
    verify_error(
        h,
        "'autodiff.vjp' op cotangent #0 type mismatch: expected tensor<2xf32> (one per result of @f), "
        "got tensor<3xf32>",
    )


def test_jvp_tangents_match_the_wrt_arguments():
    f = declare("f", [VEC3, MAT], [VEC2])
    h = Harness([f], [VEC3, MAT])
    x, w = h.args
    h.add(JVPOp(f, [x, w], [x, w], wrt=[1]))
    verify_error(h, "'autodiff.jvp' op incorrect number of tangents: expected 1 (one per wrt argument of @f), got 2")


@pytest.mark.parametrize(
    ("fwd_type", "bwd_type", "message"),
    [
        (
            ([MAT], [VEC2, MAT]),
            ([MAT, VEC2], [VEC3]),
            "fwd @f_fwd must take the arguments of @f (tensor<3xf32>), but takes (tensor<3x2xf32>)",
        ),
        (
            ([VEC3], [MAT]),
            ([MAT, VEC2], [VEC3]),
            "fwd @f_fwd must return the results of @f (tensor<2xf32>) followed by residuals, "
            "but returns (tensor<3x2xf32>)",
        ),
        (
            ([VEC3], [VEC2, MAT]),
            ([VEC2, MAT], [VEC3]),
            "bwd @f_bwd must take the residuals of @f_fwd (tensor<3x2xf32>) followed by one cotangent per result "
            "of @f (tensor<2xf32>), but takes (tensor<2xf32>, tensor<3x2xf32>)",
        ),
        (
            ([VEC3], [VEC2, MAT]),
            ([MAT, VEC2], [VEC2]),
            "bwd @f_bwd must return one cotangent per argument of @f (tensor<3xf32>), but returns (tensor<2xf32>)",
        ),
    ],
)
def test_custom_vjp_fwd_and_bwd_signatures(
    fwd_type: tuple[list[Attribute], list[Attribute]], bwd_type: tuple[list[Attribute], list[Attribute]], message: str
):
    f = declare("f", [VEC3], [VEC2])
    fwd = declare("f_fwd", *fwd_type)
    bwd = declare("f_bwd", *bwd_type)
    h = Harness([f, fwd, bwd], [VEC3])
    h.add(CustomVJPOp(f, fwd, bwd, h.args))
    verify_error(h, "'autodiff.custom_vjp' op " + message)


def test_checkpoint_results_match_the_callee():
    f = declare("f", [VEC3], [VEC2])
    h = Harness([f], [VEC3])
    h.add(CheckpointOp.create(operands=h.args, result_types=[f64], properties={"callee": SymbolRefAttr("f")}))
    verify_error(h, "'autodiff.checkpoint' op result #0 type mismatch: expected tensor<2xf32> (results of @f), got f64")


def test_stop_gradient_result_must_equal_operand():
    h = Harness([], [VEC3])
    h.add(StopGradientOp.create(operands=h.args, result_types=[VEC2]))
    with pytest.raises(VerifyException, match="expected from variable 'T'"):
        h.verify()

"""Tracing Python functions into `nn` IR.

A traced function runs once on `Tracer`s, abstract values that stand for tensors of known shape
and dtype; every operation on them appends an op to a `func.func` being built. The result is a
module of ordinary IR that every pass and backend consumes.

Frames: each function being traced has a `FunctionFrame`. Transforms (grad, cond branches
that are functions, ...) trace their function in a *child* frame, as its own `func.func`. When
the child's code uses a tracer of an enclosing frame (a closure), the tracer is *captured*: it
becomes an extra argument of the child function, and the caller passes the outer value (JAX's
closure conversion). Within one function, control-flow bodies are nested regions (scopes);
their values may use values of the enclosing blocks directly, but may not leak out of them.
"""

from __future__ import annotations

import ctypes

import inspect
import itertools
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import Any, Protocol

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer

from irgrad.dialects import nn
from irgrad.ir_numpy import to_attribute
from irgrad.tracing import dtypes
from irgrad.tracing.errors import ConcretizationError, user_location
from irgrad.tracing.pytree import TreeDef, tree_flatten, tree_leaf_names, tree_unflatten


@dataclass(frozen=True)
class ShapeDtype:
    """An abstract argument: only the shape and dtype, as jax.ShapeDtypeStruct."""

    shape: tuple[int, ...]
    dtype: np.dtype
    # Weakly typed (JAX's weak_type): a Python scalar passed to `ig.jit`, at full width.
    weak: bool = False

    def __init__(self, shape: Sequence[int], dtype: Any = dtypes.float32, weak: bool = False):
        object.__setattr__(self, "shape", tuple(int(d) for d in shape))
        object.__setattr__(self, "dtype", dtypes.canonical(dtype))
        object.__setattr__(self, "weak", bool(weak))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def tensor_type(self) -> TensorType:
        return TensorType(dtypes.element_type(self.dtype), list(self.shape))

    @staticmethod
    def of(value: Any) -> ShapeDtype:
        if isinstance(value, ShapeDtype):
            return value
        if isinstance(value, Tracer):
            return ShapeDtype(value.shape, value.dtype, value.weak)
        if isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic):
            # A Python scalar takes the default dtype; a numpy scalar (np.float64 is a float
            # subclass) keeps its own, as a 0-d array does.
            return ShapeDtype((), dtypes.scalar_dtype(value))
        array = np.asarray(value)
        return ShapeDtype(array.shape, dtypes.array_dtype_of(array))

    @staticmethod
    def of_argument(value: Any) -> ShapeDtype:
        """The abstract value of a traced argument: as `of`, except that a Python int, float or
        complex is weakly typed at full width (int64, float64, complex128), so that `ig.jit(f)(3.14159265358979, x)`
        sees the scalar exactly, as jax.jit does with x64 (a Python bool stays a strong bool)."""
        if isinstance(value, (int, float, complex)) and not isinstance(value, (bool, np.generic)):
            return ShapeDtype((), dtypes.full_width(value), weak=True)
        return ShapeDtype.of(value)

    def __repr__(self) -> str:
        weak = ", weak" if self.weak else ""
        return f"ShapeDtype({self.shape}, {self.dtype}{weak})"


class Tracer:
    """A tensor value in the function being traced: an SSA value with its shape and dtype.

    Operators and methods follow numpy; they are defined in `irgrad.numpy.tensor_methods`.
    """

    __slots__ = ("value", "frame", "block")
    __array_priority__ = 1000  # numpy defers `ndarray + Tracer` to Tracer.__radd__

    def __init__(self, value: SSAValue, frame: FunctionFrame, block: Block):
        self.value = value
        self.frame = frame
        self.block = block

    @property
    def type(self) -> TensorType:
        t = self.value.type
        assert isinstance(t, TensorType)
        return t

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.get_shape())

    @property
    def dtype(self) -> np.dtype:
        return dtypes.from_element_type(self.type.get_element_type())

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def weak(self) -> bool:
        """Weakly typed (JAX's weak_type), as a Python scalar is (see `ShapeDtype.weak`)."""
        return self.value in self.frame.weak_values

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"Tracer<{self.dtype}{list(self.shape)}>"

    def _concrete(self, what: str) -> ConcretizationError:
        return ConcretizationError(
            f"{what} needs a concrete value, but this {self!r} is traced: its value is only "
            "known when the compiled program runs. Use ig.cond / ig.where for data-dependent "
            "choices and ig.fori_loop / ig.while_loop for loops, or make the argument static."
        )

    def __bool__(self) -> bool:
        raise self._concrete("Python `if`/`while`/`bool()` on a traced value")

    def __int__(self) -> int:
        raise self._concrete("int()")

    def __float__(self) -> float:
        raise self._concrete("float()")

    def __index__(self) -> int:
        raise self._concrete("Using a traced value as a Python index")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise self._concrete("Converting a traced value to a numpy array")

    def item(self, *args: Any) -> Any:
        raise self._concrete("item()")

    def tolist(self) -> Any:
        raise self._concrete("tolist()")

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d traced array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = object.__hash__


@dataclass
class CapturedValue:
    outer: Tracer  # the value in the enclosing frame, passed by the caller
    inner: Tracer  # the extra block argument that stands for it inside this function


class FunctionFrame:
    """A `func.func` being built, with its insertion scopes and captured outer values."""

    def __init__(self, module: ModuleOp, name: str, parent: FunctionFrame | None):
        self.module = module
        self.parent = parent
        self.name = unique_symbol(module, name)
        self.block = Block()
        self.scopes: list[Block] = [self.block]
        self.captures: list[CapturedValue] = []
        self._capture_index: dict[int, Tracer] = {}
        self.num_params = 0
        # The values of this function that are weakly typed (`Tracer.weak`).
        self.weak_values: set[SSAValue] = set()

    # -- values ---------------------------------------------------------------------------

    def add_param(self, t: TensorType, weak: bool = False) -> Tracer:
        arg = self.block.insert_arg(t, self.num_params)
        self.num_params += 1
        if weak:
            self.weak_values.add(arg)
        return Tracer(arg, self, self.block)

    def mark_weak(self, tracer: Tracer) -> Tracer:
        self.weak_values.add(tracer.value)  # a value of this frame, now weakly typed
        return tracer

    def resolve(self, tracer: Tracer) -> Tracer:
        """`tracer` made usable in this frame's current scope (capturing it if it is outer)."""
        if tracer.frame is self:
            if tracer.block not in self.scopes:
                raise ConcretizationError(
                    f"{tracer!r} was created inside a control-flow body (ig.cond, ig.fori_loop, "
                    "ig.while_loop) and used outside it; return it from the body instead"
                )
            return tracer
        if not self._is_ancestor(tracer.frame):
            raise ConcretizationError(
                f"{tracer!r} escaped from a function whose tracing has finished (was it stored "
                "in a global or a Python object?); pass it as an argument instead"
            )
        key = id(tracer.value)
        if key in self._capture_index:
            return self._capture_index[key]
        assert self.parent is not None
        outer = self.parent.resolve(tracer)
        arg = self.block.insert_arg(tracer.type, len(self.block.args))
        inner = Tracer(arg, self, self.block)
        if outer.weak:
            self.weak_values.add(arg)
        self.captures.append(CapturedValue(outer, inner))
        self._capture_index[key] = inner
        self._capture_index[id(outer.value)] = inner
        return inner

    def _is_ancestor(self, frame: FunctionFrame) -> bool:
        f = self.parent
        while f is not None:
            if f is frame:
                return True
            f = f.parent
        return False

    # -- ops ------------------------------------------------------------------------------

    def emit(self, op: Operation) -> Operation:
        """Appends `op` to the current scope, located at the user's source line."""
        loc = user_location()
        if loc is not None:
            op.location = FileLineColLoc(StringAttr(loc[0]), IntAttr(loc[1]), IntAttr(loc[2]))
        self.scopes[-1].add_op(op)
        return op

    def wrap(self, value: SSAValue) -> Tracer:
        return Tracer(value, self, self.scopes[-1])

    def finish(self, results: Sequence[Tracer]) -> func.FuncOp:
        """Closes the function with `func.return` and adds it to the module.

        Only the program's entry (a frame without parent) is public: a child function is
        reached through the op that traced it (autodiff.grad, custom_vjp, ...), so once the
        autodiff pass has replaced that op, `symbol-dce` may drop it instead of compiling it.
        """
        ret = func.ReturnOp(*[r.value for r in results])
        self.block.add_op(ret)
        input_types = [a.type for a in self.block.args]
        output_types = [r.value.type for r in results]
        visibility = None if self.parent is None else "private"
        fn = func.FuncOp(
            self.name, (input_types, output_types), Region(self.block), visibility=visibility
        )
        self.module.body.block.add_op(fn)
        return fn


class _TraceState(threading.local):
    """The functions being traced, innermost last: one stack per thread (as JAX keeps its
    trace state thread-local), so threads tracing at once never see each other's frames."""

    def __init__(self) -> None:
        self.frames: list[FunctionFrame] = []


_state = _TraceState()


def current_frame() -> FunctionFrame | None:
    frames = _state.frames
    return frames[-1] if frames else None


def unique_symbol(module: ModuleOp, name: str) -> str:
    taken = {
        op.sym_name.data for op in module.body.block.ops if isinstance(op, func.FuncOp)
    }
    taken |= {f.name for f in _state.frames if f.module is module}
    if name not in taken:
        return name
    for i in itertools.count(1):
        candidate = f"{name}_{i}"
        if candidate not in taken:
            return candidate
    raise AssertionError


def function_name(fn: Callable[..., Any], default: str = "main") -> str:
    """The traced function's symbol: `fn`'s name, with `_` appended while the C library has
    a function of that name (a Python `free`, `expm1` or `malloc` would otherwise clash
    with the C function the compiled code calls)."""
    name = getattr(fn, "__name__", default)
    if not name.isidentifier() or name == "<lambda>":
        return default
    while _is_c_symbol(name):
        name += "_"
    return name


try:
    _PROCESS: ctypes.CDLL | None = ctypes.CDLL(None)  # the symbols the process has loaded
except (OSError, TypeError):  # no dlopen(NULL) (Windows): nothing to avoid
    _PROCESS = None


def _is_c_symbol(name: str) -> bool:
    if _PROCESS is None:
        return False
    try:
        getattr(_PROCESS, name)
    except AttributeError:
        return False
    return True


@dataclass
class TracedFunction:
    """A Python function traced to a `func.func`, with what callers need to call it."""

    func_op: func.FuncOp
    in_tree: TreeDef
    out_tree: TreeDef
    in_avals: list[ShapeDtype]
    out_avals: list[ShapeDtype]
    captures: list[Tracer] = field(default_factory=list)  # outer values passed after the args

    @property
    def name(self) -> str:
        return self.func_op.sym_name.data


def as_tracer(frame: FunctionFrame, x: Any, dtype: np.dtype | None = None) -> Tracer:
    """A tracer for `x`: tracers are resolved in `frame`, arrays and scalars become constants."""
    if isinstance(x, Tracer):
        return frame.resolve(x)
    return constant(x, dtype)


def constant(x: Any, dtype: np.dtype | None = None) -> Tracer:
    """A tracer holding the concrete value `x` (array or scalar) in the current frame."""
    frame = current_frame()
    if frame is None:
        raise RuntimeError("constant() needs an active trace")
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        d = dtypes.canonical(dtype) if dtype is not None else dtypes.scalar_dtype(x)
        return full((), x, d)
    array = np.asarray(x)
    d = dtypes.canonical(dtype) if dtype is not None else dtypes.array_dtype_of(array)
    array = array.astype(d, copy=False)
    if _is_splat(array):
        return full(array.shape, array.flat[0].item(), d)
    # Not np.ascontiguousarray: it turns a 0-d array (a numpy scalar) into shape (1,).
    op = nn.ConstantOp(to_attribute(np.asarray(array, order="C")))
    frame.emit(op)
    return frame.wrap(op.result)


def _is_splat(array: np.ndarray) -> bool:
    """All elements equal (NaN counting as equal to NaN), numpy scalars and 0-d arrays included."""
    if array.size == 0:
        return False
    first = array.flat[0]
    same = array == first
    if dtypes.is_float(array.dtype) and np.isnan(first):
        same = np.isnan(array)
    return bool(np.all(same))


def full(shape: tuple[int, ...], value: bool | int | float | complex, dtype: np.dtype) -> Tracer:
    frame = current_frame()
    assert frame is not None
    if dtypes.is_complex(dtype):
        # A complex splat is nn.complex of two real splats (nn.full holds a real number).
        part = dtypes.real_of(dtype)
        value = complex(value)
        op = nn.ComplexOp(full(shape, value.real, part).value, full(shape, value.imag, part).value)
        frame.emit(op)
        return frame.wrap(op.result)
    t = TensorType(dtypes.element_type(dtype), list(shape))
    if dtypes.is_float(dtype):
        value = float(value)
    else:
        value = int(value)
    op = nn.FullOp(value, t)
    frame.emit(op)
    return frame.wrap(op.result)


def trace_function(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    module: ModuleOp,
    name: str | None = None,
    in_avals: Sequence[ShapeDtype] | None = None,
    strong_outputs: bool = False,
) -> TracedFunction:
    """Traces `fn(*args)` into a new `func.func` of `module`.

    Leaves of `args` (a pytree) become the function's parameters (`in_avals` overrides their
    abstract values). The traced function is a child of the current frame, so closures over
    outer tracers become extra trailing parameters (see `TracedFunction.captures`).
    With `strong_outputs` (a program's entry), weakly typed results leave at the default
    dtype (float32, int32), as a Python scalar computation gives them in eager mode.
    """
    leaves, in_tree = tree_flatten(list(args))
    avals = list(in_avals) if in_avals is not None else [ShapeDtype.of(x) for x in leaves]
    frame = FunctionFrame(module, name or function_name(fn), current_frame())
    params = [frame.add_param(a.tensor_type(), a.weak) for a in avals]
    _name_params(fn, args, params)
    _state.frames.append(frame)
    try:
        out = fn(*tree_unflatten(in_tree, params))
        out_leaves, out_tree = tree_flatten(out)
        results = [as_tracer(frame, leaf) for leaf in out_leaves]
        if strong_outputs:
            results = [_at_default_width(r) if r.weak else r for r in results]
    finally:
        _state.frames.pop()
    func_op = frame.finish(results)
    return TracedFunction(
        func_op,
        in_tree,
        out_tree,
        avals,
        [ShapeDtype(r.shape, r.dtype, r.weak) for r in results],
        [c.outer for c in frame.captures],
    )


def _at_default_width(t: Tracer) -> Tracer:
    """A weakly typed value at its kind's default dtype (float32, int32), strongly typed."""
    d = dtypes.default_width(t.dtype)
    if d == t.dtype:
        return t
    op = t.frame.emit(nn.ConvertOp(t.value, dtypes.element_type(d)))
    return t.frame.wrap(op.results[0])


# What xDSL accepts as a value name (MLIR's suffix-id, ASCII only, not starting with a digit).
_SSA_NAME = re.compile(r"[A-Za-z_$.-][A-Za-z0-9_$.-]*")


def _name_params(fn: Callable[..., Any], args: Sequence[Any], params: Sequence[Tracer]) -> None:
    """SSA names from the Python parameter names (`%x`, `%params_0`), so the IR reads like the code."""
    try:
        names = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return
    it = iter(params)
    for name, arg in zip(names, args):
        for leaf_name in tree_leaf_names(arg, name):
            t = next(it, None)
            if t is None:
                return
            if _SSA_NAME.fullmatch(leaf_name):  # else (`α`, `layer 1`) the value stays `%0`
                t.value.name_hint = leaf_name


class Program:
    """A traced program: a module whose entry function is the traced Python function.

    `str(program)` is the textual module (MLIR syntax); `irgrad-opt` parses it back unchanged.
    Calling the program runs it on the reference interpreter.
    """

    def __init__(self, module: ModuleOp, traced: TracedFunction):
        self.module = module
        self.traced = traced
        self._expanded: ModuleOp | None = None

    @property
    def entry(self) -> str:
        return self.traced.name

    @property
    def in_avals(self) -> list[ShapeDtype]:
        return self.traced.in_avals

    @property
    def out_avals(self) -> list[ShapeDtype]:
        return self.traced.out_avals

    def as_text(self, debuginfo: bool = False) -> str:
        out = StringIO()
        Printer(stream=out, print_debuginfo=debuginfo).print_op(self.module)
        # End as irgrad-opt (xDSL's MLIR target) ends a module, with a blank line, so that
        # `irgrad-opt` of the printed program reproduces it byte for byte.
        return out.getvalue() + "\n\n"

    def __str__(self) -> str:
        return self.as_text()

    def cache_text(self) -> str:
        """The module in MLIR's generic form, the text disk-cache keys hash: complete, and
        printed without compiling any op's assembly format (irgrad.xdsl_patches.lazy_assembly_formats), which
        would double the printing's cost on a disk-cache hit that never shows the text."""
        out = StringIO()
        Printer(stream=out, print_generic_format=True).print_op(self.module)
        return out.getvalue()

    def executable_module(self) -> ModuleOp:
        """The module with its autodiff requests expanded, computed once per program."""
        if self._expanded is None:
            self._expanded = _require_executor().expand(self.module)
        return self._expanded

    def __call__(self, *args: Any) -> Any:
        return self.call_with_listeners((), *args)

    def call_with_listeners(self, listeners: Sequence[Any], *args: Any) -> Any:
        """Run on the reference interpreter with `listeners` watching every op (see
        irgrad/backends/interpreter/nan_checks.py for one)."""
        leaves, tree = tree_flatten(list(args))
        if tree != self.traced.in_tree:
            raise TypeError(
                f"{self.entry}: arguments have structure {tree!r}, the program was traced "
                f"for {self.traced.in_tree!r}"
            )
        inputs = [dtypes.as_argument(x, a.dtype) for x, a in zip(leaves, self.in_avals)]
        module = self.executable_module()
        if module is not self.module:  # expanded: complex values travel as (re, im) pairs
            inputs = [dtypes.complex_as_pairs(x) for x in inputs]
        results = _require_executor().run(module, self.entry, inputs, listeners)
        outs = [np.asarray(r) for r in results]
        if module is not self.module:
            outs = [dtypes.pairs_as_complex(r, a.dtype, a.shape) for r, a in zip(outs, self.traced.out_avals)]
        return tree_unflatten(self.traced.out_tree, outs)


class Executor(Protocol):
    """How a traced program runs on concrete values (the reference interpreter)."""

    def expand(self, module: ModuleOp) -> ModuleOp:
        """A module without autodiff requests (a copy, where there were some)."""
        ...

    def run(self, module: ModuleOp, entry: str, inputs: Sequence[Any], listeners: Sequence[Any]) -> Sequence[Any]:
        """The results of `@entry` on `inputs`."""
        ...


_executor: Executor | None = None


def install_executor(executor: Executor) -> None:
    """Make programs callable: the library installs the reference interpreter here
    (irgrad/numpy/support.py), so that this core imports no backend."""
    global _executor
    _executor = executor


def _require_executor() -> Executor:
    if _executor is None:
        raise RuntimeError("running a traced program needs the library: import irgrad.numpy first")
    return _executor


def trace(fn: Callable[..., Any], *example_args: Any) -> Program:
    """Traces `fn` on example arguments (arrays or `ShapeDtype`s, in pytrees) into a Program."""
    module = ModuleOp([])
    frames = _state.frames
    outer = frames[:]
    frames.clear()  # a new program never captures from whatever else is being traced
    try:
        traced = trace_function(fn, example_args, module=module, strong_outputs=True)
    finally:
        frames[:] = outer
    return Program(module, traced)


def element_type_of(t: Attribute) -> Attribute:
    assert isinstance(t, TensorType)
    return t.get_element_type()

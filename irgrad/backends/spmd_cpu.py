"""Compiled per-device programs: the SPMD program cut at its collectives, each piece compiled for
the CPU, the collectives run between the pieces on the simulated grid.

A per-device function from `shard-partition` is code with collectives here and there (and
`shard.process_linear_index`, which each device's thread answers itself). The code between two
collectives is an ordinary nn program, so it goes through the whole CPU pipeline (`irgrad-cpu`,
LLVM, the BLAS) as a function of its own, its arguments and results the values that cross its
boundaries (constants are recomputed in every piece). At run time every device runs the pieces
in order in its own thread, and the collectives meet in the same `GridCommunicator` as the
interpreter's (irgrad/backends/spmd.py), so both backends share one definition of every
collective, the same checks and the same counts.

An `scf.for`, `scf.while` or `scf.if` whose regions hold a collective is not compiled whole: its
regions are cut the same way, recursively, and Python runs the op itself (`_For`, `_While`,
`_If`), so compiled code makes no callbacks into Python, at the price of one Python-level call
per piece per iteration, small next to a collective. Loops and branches without collectives
stay inside a piece and are compiled.

The devices are simulated on one machine (calls of compiled code are serialized), so this says
nothing about a real cluster's speed. Not compiled: a collective inside any other op's region.
Details: docs/design/distributed.md, "irgrad/backends/spmd_cpu.py".
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import Pure

from irgrad.backends.interpreter.errors import InterpreterError
from irgrad.backends.interpreter.shard import _request
from irgrad.backends.spmd import DeviceAborted, GridCommunicator, SpmdResult, _check_grid_shape, run_devices
from irgrad.backends.interpreter.mpi import comm_of, data_request
from irgrad.dialects import mpi, shard

_COMPILED_CALLS = threading.Lock()
"""Compiled pieces run one at a time: the CPU runtime's thread pool and allocator are shared."""


@dataclass(frozen=True)
class _Piece:
    """A compiled function: reads `inputs` from the environment, writes `outputs`."""

    name: str
    inputs: tuple[SSAValue, ...]
    outputs: tuple[SSAValue, ...]


@dataclass(frozen=True)
class _For:
    """An scf.for with collectives inside: Python counts, `body` runs each iteration."""

    op: scf.ForOp
    body: list[_Step]


@dataclass(frozen=True)
class _If:
    """An scf.if with collectives inside: `branches[0]` or `[1]` runs."""

    op: scf.IfOp
    branches: list[list[_Step]]


@dataclass(frozen=True)
class _While:
    """An scf.while with collectives inside: `regions[0]` (the condition), then `[1]` (the
    body), while the condition holds."""

    op: scf.WhileOp
    regions: list[list[_Step]]


_Step = _Piece | _For | _If | _While | Operation
"""A piece, a Python-driven loop or branch, or a collective (or shard.process_linear_index)."""


def _all_pieces(steps: Sequence[_Step]) -> list[_Piece]:
    """The pieces of `steps` and of the regions of their loops and branches."""
    out: list[_Piece] = []
    for step in steps:
        if isinstance(step, _Piece):
            out.append(step)
        elif isinstance(step, _For):
            out += _all_pieces(step.body)
        elif isinstance(step, _If | _While):
            for region in step.branches if isinstance(step, _If) else step.regions:
                out += _all_pieces(region)
    return out


def _is_constant(op: Operation) -> bool:
    """An op every piece may recompute instead of receiving its value (the device's own index is
    not one: each device answers it)."""
    return (
        not op.operands and not op.regions and op.has_trait(Pure) and len(op.results) == 1
        and not isinstance(op, shard.ProcessLinearIndexOp | mpi.GridCommOp | mpi.CommWorldOp | mpi.CommRankOp)
    )


def _inside(op: Operation) -> set[SSAValue]:
    """Every value `op` defines, its nested ops' results and its regions' block arguments included."""
    values: set[SSAValue] = set()
    for inner in op.walk():
        values.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                values.update(block.args)
    return values


def _reads(op: Operation) -> list[SSAValue]:
    """The values `op` (with its regions) reads, in order, without repeats."""
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        for v in inner.operands:
            seen.setdefault(v)
    return list(seen)


class SpmdProgram:
    """`@entry` of a per-device module, cut at its collectives and compiled piece by piece."""

    def __init__(self, module: ModuleOp, entry: str, grid: Sequence[int]):
        from irgrad.backends.cpu import compile_module
        from irgrad.pipelines import cpu_steps
        from irgrad.registry import run_pipeline

        self.grid = _check_grid_shape(grid)
        fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None or len(fn.body.blocks) != 1:
            raise InterpreterError(f"no single-block function @{entry} to compile")
        self.entry = fn
        self.pieces_module = ModuleOp([])
        self._pieces = 0
        self.steps: list[_Step] = []
        self._cut(fn)
        lowered = self.pieces_module.clone()
        for _, spec in cpu_steps():
            run_pipeline(lowered, spec)
        self.compiled = compile_module(lowered)
        self.functions = {
            p.name: self.compiled.function(p.name, [v.type for v in p.inputs], [v.type for v in p.outputs])
            for p in _all_pieces(self.steps)
        }

    # -- cutting --------------------------------------------------------------------------

    def _cut(self, fn: func.FuncOp) -> None:
        block = fn.body.blocks[0]
        self.steps = self._cut_block(block, fn.sym_name.data)

    def _cut_block(self, block: Block, name: str) -> list[_Step]:
        """The steps that run the ops of `block` (its terminator excluded: its operands are
        what the block's runner reads from the environment afterwards)."""
        ops = list(block.ops)
        terminator = ops.pop()
        groups: list[list[Operation] | Operation] = []
        current: list[Operation] = []
        for op in ops:
            if _communicates(op):
                groups += [current, op] if current else [op]
                current = []
            else:
                current.append(op)
        if current:
            groups.append(current)
        reads = [{v for op in (g if isinstance(g, list) else [g]) for v in _reads(op)} for g in groups]
        needed_at_end = set(terminator.operands)
        steps: list[_Step] = []
        for k, group in enumerate(groups):
            if not isinstance(group, list):
                steps.append(self._control(group, name) if group.regions else group)
                continue
            defined = set().union(*(_inside(op) for op in group))
            outputs = []
            for op in group:
                for v in op.results:
                    # A constant is recomputed by the pieces that read it; a collective or a
                    # loop reads it from the piece that made it (a scalar from Python).
                    used_later = v in needed_at_end and not _python_constant(op) or any(
                        v in reads[j] and not (isinstance(groups[j], list) and _is_constant(op))
                        and not _python_constant(op)
                        for j in range(k + 1, len(groups))
                    )
                    if used_later:
                        outputs.append(v)
            if not outputs:
                continue
            inputs: list[SSAValue] = []
            constants: list[Operation] = []
            for op in group:
                for v in _reads(op):
                    if v in defined or v in inputs:
                        continue
                    source = v.owner
                    if isinstance(source, Operation) and _is_constant(source):
                        if source not in constants:
                            constants.append(source)
                    else:
                        inputs.append(v)
            piece_name = f"{name}_piece{self._pieces}"
            self._pieces += 1
            self._emit_piece(piece_name, group, constants, inputs, outputs)
            steps.append(_Piece(piece_name, tuple(inputs), tuple(outputs)))
        return steps

    def _control(self, op: Operation, name: str) -> _Step:
        """An scf op with collectives inside: its regions cut in turn, driven from Python."""
        if isinstance(op, scf.ForOp):
            return _For(op, self._cut_block(op.body.block, name))
        if isinstance(op, scf.IfOp):
            return _If(op, [self._cut_block(r.block, name) if r.blocks else [] for r in op.regions])
        if isinstance(op, scf.WhileOp):
            return _While(op, [self._cut_block(r.block, name) for r in op.regions])
        raise InterpreterError(
            "has a collective inside a region of an op other than scf.for, scf.if and scf.while: "
            "compiled per-device programs cannot run it (use the interpreter: backend='interp')",
            op,
        )

    def _emit_piece(
        self, name: str, group: Sequence[Operation], constants: Sequence[Operation],
        inputs: Sequence[SSAValue], outputs: Sequence[SSAValue],
    ) -> None:
        block = Block(arg_types=[v.type for v in inputs])
        mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
        for op in [*constants, *group]:
            clone = op.clone(value_mapper=mapping)
            block.add_op(clone)
            mapping.update(zip(op.results, clone.results))
        block.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
        piece = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in outputs]), Region(block))
        self.pieces_module.body.block.add_op(piece)

    # -- running --------------------------------------------------------------------------

    def run(self, per_device_args: Sequence[Sequence[Any]], timeout: float = 120.0) -> SpmdResult:
        size = math.prod(self.grid)
        if len(per_device_args) != size:
            raise InterpreterError(f"{len(per_device_args)} argument lists for a grid of {size} devices")
        communicator = GridCommunicator(self.grid, timeout)

        def device_main(index: int) -> tuple[Any, ...]:
            return self.run_device(index, per_device_args[index], communicator, serialize=True)

        return SpmdResult(self.grid, run_devices(communicator, device_main), communicator.stats)

    def run_device(
        self, index: int, args: Sequence[Any], communicator: Any, serialize: bool = False
    ) -> tuple[Any, ...]:
        """Device `index`'s results on its `args`, its collectives meeting in `communicator`
        (the simulated grid's, or irgrad/backends/mpi's when this process is the device).
        `serialize`: the devices are threads of one process, sharing the CPU runtime."""
        block = self.entry.body.blocks[0]
        ret = block.last_op
        assert ret is not None
        env: dict[SSAValue, Any] = dict(zip(block.args, args))
        self._execute(self.steps, env, index, communicator, serialize)
        # Results are the pieces' fresh arrays: copied only when one is an argument passed through.
        values = [np.asarray(_value(env, v), order="C") for v in ret.operands]
        return tuple(np.array(v) if any(v is a for a in args) else v for v in values)

    def _execute(
        self, steps: Sequence[_Step], env: dict[SSAValue, Any], index: int, communicator: Any,
        serialize: bool,
    ) -> None:
        """Run `steps` on device `index`, reading and writing `env` (global SSA value -> value)."""
        for step in steps:
            if communicator.aborted:
                raise DeviceAborted("the run was aborted", self.entry)
            if isinstance(step, _Piece):
                inputs = [_value(env, v) for v in step.inputs]
                if serialize:
                    with _COMPILED_CALLS:
                        values = self.functions[step.name].call(*inputs)
                else:
                    values = self.functions[step.name].call(*inputs)
                env.update(zip(step.outputs, values))
            elif isinstance(step, _For):
                op = step.op
                lb, ub, st = (int(_value(env, v)) for v in (op.lb, op.ub, op.step))
                carried = [_value(env, v) for v in op.iter_args]
                body = op.body.block
                yielded = cast(Operation, body.last_op).operands
                for i in range(lb, ub, st):
                    env.update(zip(body.args, [i, *carried]))
                    self._execute(step.body, env, index, communicator, serialize)
                    carried = [_value(env, v) for v in yielded]
                env.update(zip(op.results, carried))
            elif isinstance(step, _If):
                op = step.op
                taken = 0 if bool(_value(env, op.cond)) else 1
                region = op.regions[taken]
                if region.blocks:
                    self._execute(step.branches[taken], env, index, communicator, serialize)
                    yielded = cast(Operation, region.block.last_op).operands
                    env.update(zip(op.results, [_value(env, v) for v in yielded]))
            elif isinstance(step, _While):
                op = step.op
                before, after = op.before_region.block, op.after_region.block
                condition = cast(scf.ConditionOp, before.last_op)
                yielded = cast(Operation, after.last_op).operands
                values = [_value(env, v) for v in op.arguments]
                while True:
                    env.update(zip(before.args, values))
                    self._execute(step.regions[0], env, index, communicator, serialize)
                    passed = [_value(env, v) for v in condition.args]
                    if not bool(_value(env, condition.condition)):
                        break
                    env.update(zip(after.args, passed))
                    self._execute(step.regions[1], env, index, communicator, serialize)
                    values = [_value(env, v) for v in yielded]
                env.update(zip(op.results, passed))
            elif isinstance(step, shard.ProcessLinearIndexOp):
                env[step.results[0]] = index
            elif isinstance(step, mpi.GridCommOp | mpi.CommWorldOp):
                env[step.results[0]] = comm_of(step, self.grid)
            elif isinstance(step, mpi.CommRankOp):
                env[step.results[0]] = np.int32(env[step.comm].rank_of(index))
            elif isinstance(step, mpi.DATA_MOVEMENT):
                request, value = data_request(step, env[step.comm], np.asarray(_value(env, step.input), order="C"))
                env[step.results[0]] = communicator.exchange(index, request, value, step)
            else:
                value = np.asarray(_value(env, step.operands[0]), order="C")  # 0-d stays 0-d
                env[step.results[0]] = communicator.exchange(index, _request(step), value, step)


def _communicates(op: Operation) -> bool:
    """`op` is a collective or the device's index, or has one in its regions: it is run from
    Python, not compiled."""
    return any(isinstance(inner, (*shard.COLLECTIVES, shard.ProcessLinearIndexOp, *mpi.OPS)) for inner in op.walk())


def _python_constant(op: Operation) -> bool:
    """A scalar `arith.constant` (a loop bound, a step): Python reads its value from the IR."""
    return isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr | FloatAttr)


def _value(env: dict[SSAValue, Any], v: SSAValue) -> Any:
    if v in env:
        return env[v]
    op = v.owner
    if isinstance(op, arith.ConstantOp) and _python_constant(op):
        value = cast(IntegerAttr | FloatAttr, op.value).value.data
        return bool(value) if isinstance(op.value.type, IntegerType) and op.value.type.width.data == 1 else value
    raise InterpreterError(f"no value for {v} (a bug in the cutting of the per-device program)")

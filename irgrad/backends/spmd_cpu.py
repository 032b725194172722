"""Compiled per-device programs: the SPMD program cut at its collectives, each piece compiled for
the CPU, the collectives run between the pieces on the simulated grid.

A per-device function from `shard-partition` is straight-line code with collectives here and
there (and `shard.process_linear_index`, which each device's thread answers itself). The code between two collectives is an ordinary nn program, so it goes through the whole
CPU pipeline (`irgrad-cpu`, LLVM, the BLAS) as a function of its own: its arguments are the values
it reads from earlier pieces, collectives or the function's arguments; its results are the values
later pieces, collectives or the return read. Constants are recomputed in every piece that needs
them rather than passed. At run time every device runs the pieces in order in its own thread, and
the collectives meet in the same `GridCommunicator` as the interpreter's (irgrad/backends/spmd.py),
so both backends share one definition of every collective, the same checks and the same counts.

The devices are simulated on one machine: calls of compiled code are serialized (the CPU runtime
shares one thread pool), so this measures nothing about a real cluster's speed; it runs the
per-device program as compiled code, exactly as a single-device `ig.jit` would run each piece.

Not compiled yet: collectives inside loops or branches (the interpreter runs those).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import Pure

from irgrad.backends.interpreter.errors import InterpreterError
from irgrad.backends.interpreter.shard import _request
from irgrad.backends.spmd import DeviceAborted, GridCommunicator, SpmdResult, _check_grid_shape, run_devices
from irgrad.dialects import shard

_COMPILED_CALLS = threading.Lock()
"""Compiled pieces run one at a time: the CPU runtime's thread pool and allocator are shared."""


@dataclass(frozen=True)
class _Piece:
    name: str
    inputs: tuple[SSAValue, ...]
    outputs: tuple[SSAValue, ...]


def _is_constant(op: Operation) -> bool:
    """An op every piece may recompute instead of receiving its value (the device's own index is
    not one: each device answers it)."""
    return (
        not op.operands and not op.regions and op.has_trait(Pure) and len(op.results) == 1
        and not isinstance(op, shard.ProcessLinearIndexOp)
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
        from irgrad.lowering.pipelines import cpu_steps, run_pipeline

        self.grid = _check_grid_shape(grid)
        fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None or len(fn.body.blocks) != 1:
            raise InterpreterError(f"no single-block function @{entry} to compile")
        self.entry = fn
        self.pieces_module = ModuleOp([])
        self.steps: list[_Piece | Operation] = []
        self._cut(fn)
        lowered = self.pieces_module.clone()
        for _, spec in cpu_steps():
            run_pipeline(lowered, spec)
        self.compiled = compile_module(lowered)
        self.functions = {
            p.name: self.compiled.function(p.name, [v.type for v in p.inputs], [v.type for v in p.outputs])
            for p in self.steps
            if isinstance(p, _Piece)
        }

    # -- cutting --------------------------------------------------------------------------

    def _cut(self, fn: func.FuncOp) -> None:
        ops = list(fn.body.blocks[0].ops)
        ret = ops[-1]
        assert isinstance(ret, func.ReturnOp)
        groups: list[list[Operation] | Operation] = []
        current: list[Operation] = []
        for op in ops[:-1]:
            if isinstance(op, (*shard.COLLECTIVES, shard.ProcessLinearIndexOp)):
                groups += [current, op] if current else [op]
                current = []
                continue
            if any(isinstance(inner, shard.COLLECTIVES) for inner in op.walk() if inner is not op):
                raise InterpreterError(
                    "has a collective inside a region: compiled per-device programs cannot run it yet "
                    "(use the interpreter: backend='interp')",
                    op,
                )
            current.append(op)
        if current:
            groups.append(current)
        owner: dict[SSAValue, int] = {}
        for k, group in enumerate(groups):
            for op in group if isinstance(group, list) else [group]:
                for v in op.results:
                    owner[v] = k
        later_reads: dict[int, set[SSAValue]] = {}
        for k, group in enumerate(groups):
            reads = set()
            for op in group if isinstance(group, list) else [group]:
                reads.update(_reads(op))
            later_reads[k] = reads
        needed_at_end = set(ret.operands)
        for k, group in enumerate(groups):
            if not isinstance(group, list):
                self.steps.append(group)
                continue
            defined = set().union(*(_inside(op) for op in group))
            outputs = []
            for op in group:
                for v in op.results:
                    used_later = v in needed_at_end or any(
                        v in later_reads[j] and not (isinstance(groups[j], list) and _is_constant(op))
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
                    if isinstance(source, Operation) and _is_constant(source) and source not in constants:
                        constants.append(source)
                    elif not (isinstance(source, Operation) and _is_constant(source)):
                        inputs.append(v)
            name = f"{fn.sym_name.data}_piece{len([s for s in self.steps if isinstance(s, _Piece)])}"
            self._emit_piece(name, group, constants, inputs, outputs)
            self.steps.append(_Piece(name, tuple(inputs), tuple(outputs)))

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
        args = self.entry.body.blocks[0].args
        ret = self.entry.body.blocks[0].last_op
        assert ret is not None

        def device_main(index: int) -> tuple[Any, ...]:
            env: dict[SSAValue, Any] = dict(zip(args, per_device_args[index]))
            for step in self.steps:
                if communicator.aborted:
                    raise DeviceAborted("the run was aborted", self.entry)
                if isinstance(step, _Piece):
                    inputs = [env[v] for v in step.inputs]
                    with _COMPILED_CALLS:
                        values = self.functions[step.name].call(*inputs)
                    env.update(zip(step.outputs, values))
                elif isinstance(step, shard.ProcessLinearIndexOp):
                    env[step.results[0]] = index
                else:
                    value = np.asarray(env[step.operands[0]], order="C")  # 0-d stays 0-d
                    env[step.results[0]] = communicator.exchange(index, _request(step), value, step)
            return tuple(np.array(env[v], order="C") for v in ret.operands)

        return SpmdResult(self.grid, run_devices(communicator, device_main), communicator.stats)

"""`ig.distributed.jit`: trace a function on global arrays, partition it over a device mesh,
and run the per-device program on the simulated grid.

The steps are the compiler's, each visible with `.lower(*args).as_text(stage)`:
1. trace `fn` with every argument constrained to its placements (and the results to
   `out_placements`, when given): `shard.shard` ops in a global program ("global");
2. expand autodiff requests: the derivative of the annotated program is itself annotated
   (the VJP of a sharding constraint constrains the cotangent), so the backward pass is
   partitioned by the same rules as the forward ("autodiff");
3. `shard-partition` and `symbol-dce`: the per-device program with its collectives ("spmd");
   `convert-shard-to-mpi` makes it message passing with reductions in a fixed order ("mpi"),
   what each process of a multi-process job runs (irgrad/distributed/on_processes.py), compiled
   whole with its collectives as calls into the MPI library (irgrad/backends/mpi/compiled.py);
4. in one process (`simulate`), run the "mpi" stage on the simulated grid, one thread per device,
   collectives meeting in the middle (irgrad/backends/spmd.py): compiled for the CPU piece by
   piece between collectives (`backend="cpu"`, the default; irgrad/backends/spmd_cpu.py) or on
   the reference interpreter (`backend="interp"`); results are assembled into global arrays.

Loops and branches (`ig.fori_loop`, `ig.while_loop`, `ig.cond`) are partitioned inside.
A new argument signature traces a new program, as in `ig.jit`; `stats` holds the last call's
per-device counts of the "mpi" stage's data movement (`all_to_all`, `all_gather`) and bytes sent.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Callable, Sequence
from io import StringIO
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from irgrad.tracing.pytree import tree_flatten, tree_unflatten
from irgrad.tracing.tracer import ShapeDtype, trace

STAGES = ("global", "autodiff", "spmd", "mpi")


def _global_shape_dtype(x: Any) -> ShapeDtype:
    """What the program is traced for: a ShardedArray's global shape, any other array's own."""
    from irgrad.distributed.sharded_array import ShardedArray

    if isinstance(x, ShardedArray):
        return ShapeDtype(x.shape, x.dtype)
    return ShapeDtype.of(x)


def _is_placements(spec: Any) -> bool:
    from irgrad.distributed.placements import Partial, Replicate, Shard

    return isinstance(spec, (list, tuple)) and all(isinstance(p, (Shard, Replicate, Partial)) for p in spec) and len(spec) > 0


def _leaf_placements(spec: Any, arg: Any, mesh: Any, what: str) -> list[Any]:
    """One placements list per leaf of `arg`: `spec` is None (replicated), a placements list
    (for every leaf of the argument) or a pytree of those matching the argument's structure."""
    from irgrad.distributed.placements import Replicate

    leaves, tree = tree_flatten(arg)
    if spec is None:
        return [[Replicate()] * mesh.ndim for _ in leaves]
    if _is_placements(spec):
        return [list(spec) for _ in leaves]
    specs, spec_tree = tree_flatten(spec, is_leaf=lambda s: s is None or _is_placements(s))
    if spec_tree != tree:
        raise ValueError(f"distributed.jit: {what} placements have structure {spec_tree!r}, the argument {tree!r}")
    return [[Replicate()] * mesh.ndim if s is None else list(s) for s in specs]


class Lowered:
    """A traced, differentiated and partitioned program; `as_text(stage)` prints a stage."""

    def __init__(self, modules: dict[str, ModuleOp], entry: str):
        self.modules = modules
        self.entry = entry

    @functools.cached_property
    def fingerprint(self) -> str:
        """A hash of the per-device program: processes of one job must run the same."""
        return hashlib.sha256(self.as_text("spmd").encode()).hexdigest()[:16]

    def as_text(self, stage: str = "spmd") -> str:
        if stage not in self.modules:
            raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
        out = StringIO()
        Printer(stream=out).print_op(self.modules[stage])
        return out.getvalue() + "\n"


class DistributedJitted:
    """`fn` specialized per signature, partitioned over `mesh`, run on the simulated grid."""

    def __init__(
        self, fn: Callable[..., Any], mesh: Any, in_placements: Sequence[Any], out_placements: Any, backend: str
    ):
        if backend not in ("cpu", "interp"):
            raise ValueError(f"distributed.jit: backend must be 'cpu' or 'interp', got {backend!r}")
        self.backend = backend
        self._programs: dict[Any, Any] = {}
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.mesh = mesh
        self.in_placements = tuple(in_placements)
        self.out_placements = out_placements
        self._lowered: dict[Any, tuple[Lowered, Any]] = {}
        self.stats: Any = None

    def _signature(self, args: tuple[Any, ...]) -> Any:
        leaves, tree = tree_flatten(list(args))
        return tree, tuple(_global_shape_dtype(x) for x in leaves)

    def lower(self, *args: Any) -> Lowered:
        return self._lower(args)[0]

    def _lower(self, args: tuple[Any, ...]) -> tuple[Lowered, Any]:
        key = self._signature(args)
        if key not in self._lowered:
            self._lowered[key] = self._build(args)
        return self._lowered[key]

    def _build(self, args: tuple[Any, ...]) -> tuple[Lowered, Any]:
        from irgrad.backends.interpreter.runner import expand_autodiff
        from irgrad.distributed.constraint import with_sharding_constraint
        from irgrad.context import make_context
        from irgrad.registry import build_pipeline

        if len(self.in_placements) != len(args):
            raise ValueError(
                f"distributed.jit({self.fn.__name__}): {len(self.in_placements)} in_placements "
                f"for {len(args)} arguments"
            )
        specs = [
            _leaf_placements(spec, arg, self.mesh, f"argument #{i}")
            for i, (spec, arg) in enumerate(zip(self.in_placements, args))
        ]
        mesh, out_spec, fn = self.mesh, self.out_placements, self.fn

        def constrained(*traced_args: Any) -> Any:
            pinned = []
            for arg, leaf_specs in zip(traced_args, specs):
                leaves, tree = tree_flatten(arg)
                leaves = [with_sharding_constraint(x, mesh, p) for x, p in zip(leaves, leaf_specs)]
                pinned.append(tree_unflatten(tree, leaves))
            out = fn(*pinned)
            if out_spec is None:
                return out
            outs = _leaf_placements(out_spec, out, mesh, "result")
            leaves, tree = tree_flatten(out)
            return tree_unflatten(tree, [with_sharding_constraint(x, mesh, p) for x, p in zip(leaves, outs)])

        constrained.__name__ = getattr(fn, "__name__", "main")
        try:  # parameter names for the IR's SSA names, as ig.jit gives them
            constrained.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            pass
        example = tuple(
            tree_unflatten(tree_flatten(a)[1], [_global_shape_dtype(x) for x in tree_flatten(a)[0]]) for a in args
        )
        program = trace(constrained, *example)
        modules = {"global": program.module}
        modules["autodiff"] = expand_autodiff(program.module)
        spmd = modules["autodiff"].clone()
        build_pipeline("shard-partition,symbol-dce,canonicalize,cse").apply(make_context(plugins=False), spmd)
        modules["spmd"] = spmd
        processes = spmd.clone()
        build_pipeline("convert-shard-to-mpi,canonicalize,cse").apply(make_context(plugins=False), processes)
        modules["mpi"] = processes
        return Lowered(modules, program.entry), program.traced.out_tree

    def __call__(self, *args: Any) -> Any:
        """In a multi-process job, this process's device (irgrad/distributed/on_processes.py);
        otherwise every device on the simulated grid (`simulate`)."""
        from irgrad.distributed.process import process_group

        group = process_group()
        if group is None:
            return self.simulate(*args)
        from irgrad.distributed.on_processes import run_on_processes

        lowered, out_tree = self._lower(args)
        leaves, _ = tree_flatten(list(args))
        program = self._rank_program(lowered, self._signature(args)) if self.backend == "cpu" else None
        results, mine = run_on_processes(
            lowered.modules["mpi"], lowered.entry, self.mesh, leaves, group, program, lowered.fingerprint
        )
        self.stats = [None] * group.size
        self.stats[group.rank] = mine
        return tree_unflatten(out_tree, results)

    def simulate(self, *args: Any) -> Any:
        """Every device of the mesh in this process, one thread each, on global arrays: the
        oracle and debugging mode, in a job of any size (a ShardedArray argument must then be
        replicated or come from a 1-process job). The devices run the program the processes
        run (the "mpi" stage, compiled the same way), so results are bit-identical to theirs."""
        from irgrad.backends.spmd import run_partitioned

        lowered, out_tree = self._lower(args)
        leaves, _ = tree_flatten(list(args))
        inputs = [np.asarray(x) for x in leaves]
        runner = None
        if self.backend == "cpu":
            runner = self._compiled(lowered, self._signature(args)).run
        results, self.stats = run_partitioned(lowered.modules["mpi"], lowered.entry, inputs, runner)
        return tree_unflatten(out_tree, [np.asarray(r) for r in results])

    def _compiled(self, lowered: Lowered, key: Any, stage: str = "mpi") -> Any:
        """The per-device program of `stage` compiled piece by piece (irgrad/backends/spmd_cpu.py),
        once per signature."""
        if (key, stage) not in self._programs:
            from irgrad.backends.spmd_cpu import SpmdProgram

            self._programs[(key, stage)] = SpmdProgram(lowered.modules[stage], lowered.entry, self.mesh.shape)
        return self._programs[(key, stage)]


    def _rank_program(self, lowered: Lowered, key: Any) -> Any:
        """This process's device program compiled whole, its collectives calls into the MPI
        library (irgrad/backends/mpi/compiled.py), once per signature."""
        if (key, "process") not in self._programs:
            from irgrad.backends.mpi.compiled import RankProgram

            self._programs[(key, "process")] = RankProgram(lowered.modules["mpi"], lowered.entry, self.mesh.shape)
        return self._programs[(key, "process")]


def jit(
    fn: Callable[..., Any], mesh: Any, in_placements: Sequence[Any], out_placements: Any = None, backend: str = "cpu"
) -> DistributedJitted:
    """`fn` run data- or model-parallel on `mesh` (an `ig.distributed.Mesh`).

    `in_placements` has one entry per positional argument: None (replicated), a placements list
    such as `[Shard(0)]` (for every array in that argument) or a pytree of placements lists
    matching the argument. Results are constrained to `out_placements` (same forms) when given;
    otherwise they keep the placement the partitioner gives them, pending sums all-reduced.
    Calls take and return global numpy arrays. `backend="cpu"` compiles the per-device program
    (cut at its collectives, irgrad/backends/spmd_cpu.py); `"interp"` runs it on the reference
    interpreter, one per device.
    """
    return DistributedJitted(fn, mesh, in_placements, out_placements, backend)

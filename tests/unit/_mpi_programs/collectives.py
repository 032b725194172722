"""Every collective between processes against the simulated grid's definition, bit for bit.

Each process builds every process's input (one seed), runs its part through MPI and compares
with irgrad/backends/interpreter/collectives.py's result for its device."""

import itertools
import math

import numpy as np
from xdsl.dialects.shard import ReductionKind

from irgrad.backends.interpreter import collectives
from irgrad.backends.interpreter.shard import Collective
from irgrad.backends.mpi import MpiGrid
from irgrad.distributed.process import process_group
from _mpi_util import report

group = process_group()
size, rank = group.size, group.rank
grids = [(size,)] + ([(2, size // 2)] if size % 2 == 0 and size > 2 else [])
failures, checks = [], 0


def check(name, got, want):
    global checks
    checks += 1
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
        failures.append(f"{name}: got {got.dtype}{got.shape}, want {want.dtype}{want.shape}")


for grid in grids:
    axes_choices = [tuple(p) for r in range(1, len(grid) + 1) for p in itertools.permutations(range(len(grid)), r)]
    for axes in axes_choices:
        g = math.prod(grid[a] for a in axes)
        for dtype, shape in [(np.float64, (2 * g, 3)), (np.float32, (4 * g, 700)), (np.int32, (g, 5)),
                             (np.float64, (g * 1001,)), (np.float64, (g * 1001 + 1,)), (np.float64, ())]:
            rng = np.random.default_rng(abs(hash((grid, axes, shape))) % 2**32)
            values = [(rng.standard_normal(shape) * 10).astype(dtype) for _ in range(size)]
            for kind in (ReductionKind.SUM, ReductionKind.MAX, ReductionKind.MIN, ReductionKind.PRODUCT, ReductionKind.AVERAGE):
                if dtype == np.int32 and kind == ReductionKind.AVERAGE:
                    continue
                grid_comm = MpiGrid(group, grid)
                request = Collective("all_reduce", axes, (("reduction", kind.value),), None)
                got = grid_comm.exchange(rank, request, values[rank], None)
                check(f"all_reduce {kind.value} {grid} {axes} {dtype.__name__}{shape}", got,
                      collectives.all_reduce(values, grid, axes, kind)[rank])
            if not shape:
                continue
            for axis in range(len(shape)):
                if shape[axis] % g:
                    continue
                cases = [
                    ("all_gather", (("gather_axis", axis),), lambda v: collectives.all_gather(v, grid, axes, axis)),
                    ("all_slice", (("slice_axis", axis),), lambda v: collectives.all_slice(v, grid, axes, axis)),
                    ("reduce_scatter", (("scatter_axis", axis), ("reduction", "sum")),
                     lambda v: collectives.reduce_scatter(v, grid, axes, axis)),
                ]
                for other in range(len(shape)):
                    cases.append(("all_to_all", (("split_axis", axis), ("concat_axis", other)),
                                  lambda v, o=other: collectives.all_to_all(v, grid, axes, axis, o)))
                for kind, params, reference in cases:
                    grid_comm = MpiGrid(group, grid)
                    got = grid_comm.exchange(rank, Collective(kind, axes, params, None), values[rank], None)
                    check(f"{kind} {params} {grid} {axes} {dtype.__name__}{shape}", got, reference(values)[rank])

# Bytes counted at the MPI calls: a large all_reduce sends a ring's 2 (g-1)/g of the array.
big = np.ones(100_000)
counter = MpiGrid(group, (size,))
counter.exchange(rank, Collective("all_reduce", (0,), (("reduction", "sum"),), None), big, None)
report(checks=checks, failures=failures, bytes=counter.stats.bytes_sent, expected_bytes=collectives.bytes_sent("all_reduce", big.nbytes, size))

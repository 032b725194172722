"""`ig.distributed`: torch DTensor-style placements on a simulated device mesh, spelled in the
shard dialect.

    mesh = ig.distributed.Mesh((2, 4))                       # 8 devices, axes "x", "y"
    dt = ig.distributed.distribute_tensor(x, mesh, [Shard(0), Replicate()])
    dt.redistribute([Replicate(), Shard(1)])                 # all_slice on y, all_gather on x
    dt.full_tensor()                                         # the global numpy array again

    def step(x):                                             # traced: shard.grid/sharding/shard
        return ig.distributed.with_sharding_constraint(x, mesh, [Shard(0), Replicate()])
    ig.trace(step, ig.ShapeDtype((8, 8)))                    # shard.grid, .sharding, .shard
    step(x) is x                                             # eagerly: the global value

Multi-process jobs (`mpiexec -n 4 python train.py`, one process per device over MPI):
process.py, sharded_array.py, on_processes.py, launch.py. Modules: placements.py (Mesh, Shard / Replicate / Partial, their shard-dialect `Sharding`),
irgrad/transforms/shard/reshard.py (which collective moves which mesh axis; shared with shard-partition), dtensor.py (DTensor: every device's
array, redistributed with the interpreter's collectives, communication recorded),
constraint.py (with_sharding_constraint: identity eagerly, `shard.shard` under tracing),
irgrad/distributed/jit.py (`jit`: trace, differentiate, partition with
`shard-partition`, run the per-device program on the simulated grid).
"""

from typing import TYPE_CHECKING

from irgrad.distributed.constraint import with_sharding_constraint
from irgrad.distributed.jit import jit
from irgrad.distributed.process import initialize, process_count, process_index, shutdown
from irgrad.distributed.placements import (
    Mesh,
    Partial,
    Placement,
    Replicate,
    Shard,
    placements_to_sharding,
    sharding_to_placements,
)
from irgrad.transforms.shard.reshard import Step, plan_redistribute

if TYPE_CHECKING:
    from irgrad.distributed.dtensor import Comm, DTensor, distribute_tensor, identity_of, record_comms
    from irgrad.distributed.sharded_array import ShardedArray, from_local, make_array_from_process_local_data

_DTENSOR = {"Comm", "DTensor", "distribute_tensor", "identity_of", "record_comms"}
_SHARDED = {"ShardedArray", "from_local", "make_array_from_process_local_data"}


def __getattr__(name: str):
    """dtensor.py on first use: it runs the interpreter's collectives, and importing the
    interpreter would add a fifth to `import irgrad`."""
    if name in _DTENSOR:
        from irgrad.distributed import dtensor

        return getattr(dtensor, name)
    if name in _SHARDED:
        from irgrad.distributed import sharded_array

        return getattr(sharded_array, name)
    raise AttributeError(f"module 'irgrad.distributed' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _DTENSOR | _SHARDED)


__all__ = [
    "Comm",
    "DTensor",
    "Mesh",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "ShardedArray",
    "Step",
    "distribute_tensor",
    "from_local",
    "identity_of",
    "initialize",
    "jit",
    "make_array_from_process_local_data",
    "placements_to_sharding",
    "plan_redistribute",
    "process_count",
    "process_index",
    "record_comms",
    "sharding_to_placements",
    "shutdown",
    "with_sharding_constraint",
]

"""A data-parallel step on every process, with one fault chosen by argv[1]:

- raise: process 1 raises before the step; the others wait at its first collective.
- stuck: process 1 sleeps; the others' deadline (argv[2] s) passes at the first collective.
- shapes: process 1 passes a batch of another size: a different per-device program.
- steps: process 0 runs one step fewer than the others, then exits.
- mpi_error: every process's compiled step gets invalid communicator handles (white-box): the
  MPI library's error comes back as a CollectiveError naming the collective.
- late: process 1 sleeps; process 0 skips the call's agreement (white-box), so the deadline
  that passes is the compiled code's, inside the step, at its first collective.
"""

import sys
import time

import numpy as np

import irgrad as ig
from irgrad.distributed import Mesh, Shard

mode = sys.argv[1]
ig.distributed.initialize(timeout=float(sys.argv[2]) if len(sys.argv) > 2 else None)
rank, n = ig.distributed.process_index(), ig.distributed.process_count()
mesh = Mesh((n,))


def loss(w, x):
    return ig.mean(ig.tanh(x @ w) ** 2)


step = ig.distributed.jit(ig.grad(loss), mesh, in_placements=(None, [Shard(0)]))
w = np.ones((3, 2))
rows = 4 if mode != "shapes" or rank != 1 else 6
x = ig.distributed.from_local(np.full((rows, 3), float(rank)), mesh, [Shard(0)])
step.lower(w, x)  # every process compiles first, so the fault happens at the collective

if mode == "raise" and rank == 1:
    raise ValueError("boom on purpose")
if mode == "late":
    program = step._rank_program(step.lower(w, x), step._signature((w, x)))
    program.first = None  # no agreement: the compiled collective's own wait
if mode == "mpi_error":
    from irgrad.backends.mpi.calls import RUNTIME

    program = step._rank_program(step.lower(w, x), step._signature((w, x)))
    bind = program._bind

    def bind_invalid(group):
        bind(group)
        for k in range(len(RUNTIME["comms"])):
            RUNTIME["comms"][k] = 0  # no communicator's handle

    program._bind = bind_invalid
if mode in ("stuck", "late") and rank == 1:
    time.sleep(600)
steps = 2 if mode == "steps" and rank == 0 else 3
for _ in range(steps):
    step(w, x)
print(f"process {rank} finished", flush=True)

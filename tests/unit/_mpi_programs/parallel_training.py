"""Data-, tensor- and fully-sharded-parameter-parallel gradients and training on real processes,
checked on every process against the single-device program (float64) and, bit for bit, against
the simulated grid (`DistributedJitted.simulate`) for the same mesh. argv[1]: backend."""

import hashlib
import sys

import numpy as np

import irgrad as ig
from irgrad.distributed import Mesh, Replicate, Shard
from _mpi_util import report

backend = sys.argv[1] if len(sys.argv) > 1 else "cpu"
n, rank = ig.distributed.process_count(), ig.distributed.process_index()
mesh = Mesh((n,), ("d",))
failures: list[str] = []
digests: dict[str, str] = {}


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = ig.tanh(x @ w1 + b1)
    return ig.mean((h @ w2 + b2 - y) ** 2)


rng = np.random.default_rng(0)
params = [rng.standard_normal(s) for s in [(8, 8), (8,), (8, 4), (4,)]]
x, y = rng.standard_normal((16, 8)), rng.standard_normal((16, 4))
value0, grads0 = ig.value_and_grad(mlp_loss)(params, x, y)


def local(a):
    return a.to_local() if hasattr(a, "to_local") else np.asarray(a)


def chunk_of(full, array):
    """This process's chunk of the simulated grid's global result `full`."""
    from irgrad.distributed.sharded_array import chunk_slices

    if not hasattr(array, "split"):  # a 1-process job returns global numpy arrays
        return np.asarray(full)
    return np.asarray(full)[chunk_slices(array.split, mesh.shape, rank, array.to_local().shape)]


def check(name, results, simulated, singles):
    for i, (r, s, one) in enumerate(zip(results, simulated, singles)):
        mine = local(r)
        if not np.array_equal(mine, chunk_of(s, r)):
            failures.append(f"{name} #{i}: differs from the simulated grid")
        whole = r.full_tensor() if hasattr(r, "full_tensor") else r
        if not np.allclose(whole, one, rtol=1e-12, atol=1e-13):
            failures.append(f"{name} #{i}: differs from one device")
        if getattr(r, "is_replicated", True):
            digests[f"{name} #{i}"] = hashlib.sha256(mine.tobytes()).hexdigest()


def run(name, jitted, args):
    value, grads = jitted(*args)
    sim_value, sim_grads = jitted.simulate(*[ig.tree_map(lambda a: a.full_tensor() if hasattr(a, "full_tensor") else a, a) for a in args])
    check(name, [value, *grads], [sim_value, *sim_grads], [value0, *grads0])
    return jitted


# Data parallel (DDP): the batch split; x from this process's rows, y as a global array.
mine = slice(rank * 16 // n, (rank + 1) * 16 // n)
dp = ig.distributed.jit(ig.value_and_grad(mlp_loss), mesh, in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
run("data parallel", dp, (params, ig.distributed.from_local(x[mine], mesh, [Shard(0)]), y))
dp_collectives = dict(dp.stats[rank].collectives)

# Tensor parallel (Megatron): w1, b1 by columns, w2 by rows.
tp_place = ([[Shard(1)], [Shard(0)], [Shard(0)], [Replicate()]], None, None)
tp = ig.distributed.jit(ig.value_and_grad(mlp_loss), mesh, in_placements=tp_place, backend=backend)
run("tensor parallel", tp, (params, x, y))

# Fully sharded parameters (FSDP / ZeRO-3): parameters and gradients stored split by rows.
fsdp = ig.distributed.jit(
    ig.value_and_grad(mlp_loss), mesh, in_placements=([Shard(0)], [Shard(0)], [Shard(0)]),
    out_placements=(None, [[Shard(0)]] * 4), backend=backend,
)
sharded = [ig.distributed.from_local(np.split(p, n)[rank], mesh, [Shard(0)]) for p in params]
run("fsdp", fsdp, (sharded, x, y))
fsdp_collectives = dict(fsdp.stats[rank].collectives)


# A training loop: five data-parallel SGD steps from Python, then five inside one program.
def sgd_step(p, x, y):
    g = ig.grad(mlp_loss)(p, x, y)
    return [w - 0.1 * dw for w, dw in zip(p, g)]


def sgd_loop(p, x, y):
    return ig.fori_loop(0, 5, lambda i, q: sgd_step(q, x, y), p)


step = ig.distributed.jit(sgd_step, mesh, in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
p_dist, p_one = params, params
for _ in range(5):
    p_dist = [local(a) for a in step(p_dist, x, y)]
    p_one = ig.jit(sgd_step)(p_one, x, y)
looped = ig.distributed.jit(sgd_loop, mesh, in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
p_loop = looped(params, x, y)
loop_collectives = dict(looped.stats[rank].collectives) if n > 1 else {}
simulated = looped.simulate(params, x, y)
for i, (a, b, c, s) in enumerate(zip(p_dist, p_one, p_loop, simulated)):
    if not np.allclose(a, b, rtol=1e-12, atol=1e-13):
        failures.append(f"python loop #{i}: differs from one device")
    if not np.array_equal(a, local(c)):
        failures.append(f"fori_loop #{i}: differs from the python loop")
    if not np.array_equal(local(c), s):
        failures.append(f"fori_loop #{i}: differs from the simulated grid")
    digests[f"trained #{i}"] = hashlib.sha256(local(c).tobytes()).hexdigest()

# A 1-process job is ig.jit, bit for bit.
if n == 1:
    for i, (a, b) in enumerate(zip(p_dist, p_one)):
        if not np.array_equal(a, b):
            failures.append(f"1 process #{i}: differs from ig.jit")

report(failures=failures, digests=digests, dp=dp_collectives, fsdp=fsdp_collectives, loop=loop_collectives)

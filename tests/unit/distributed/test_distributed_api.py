"""ig.distributed: meshes, placements and their shard-dialect shardings, DTensor (distribute,
full_tensor, redistribute with the interpreter's collectives and their communication record),
and with_sharding_constraint (identity eagerly, shard.grid / shard.sharding / shard.shard traced).

Redistribution is checked for every pair of placements on meshes (4,) and (2, 3): the global
value survives (full_tensor) and every device holds what distribute_tensor would give it, and
the collectives each kind of transition runs are pinned exactly.
"""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np
import pytest

import irgrad as ig
from irgrad.dialects.shard import ReductionKind, Sharding
from irgrad.distributed import (
    DTensor,
    Mesh,
    Partial,
    Replicate,
    Shard,
    distribute_tensor,
    placements_to_sharding,
    plan_redistribute,
    record_comms,
    sharding_to_placements,
    with_sharding_constraint,
)

S0, S1, R, P = Shard(0), Shard(1), Replicate(), Partial()
PMAX = Partial("max")
MESH4 = Mesh((4,))
MESH23 = Mesh((2, 3))


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---------------------------------------------------------------------------------------------
# Mesh, placements, shardings
# ---------------------------------------------------------------------------------------------


def test_mesh():
    m = Mesh((2, 3))
    assert (m.shape, m.size, m.ndim, m.axis_names, m.name) == ((2, 3), 6, 2, ("x", "y"), "mesh")
    assert m.devices == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert m.axis("y") == 1 and m.axis(-1) == 1
    assert Mesh(4).shape == (4,)
    assert repr(Mesh((2, 2), ("dp", "tp"), name="g")) == "Mesh((2, 2), ('dp', 'tp'), name='g')"
    with pytest.raises(ValueError, match="positive ints"):
        Mesh((2, 0))
    with pytest.raises(ValueError, match="distinct names"):
        Mesh((2, 2), ("a", "a"))


def test_placement_reprs_and_equality():
    assert [repr(p) for p in (Shard(1), Replicate(), Partial(), Partial("max"))] == [
        "Shard(1)", "Replicate()", "Partial()", "Partial('max')"
    ]
    assert Shard(0) == Shard(0) and Partial() == Partial("sum") and Partial() != PMAX
    assert len({Shard(0), Shard(0), Replicate()}) == 2
    with pytest.raises(ValueError, match="reduce_op 'avg'"):
        Partial("avg")


@pytest.mark.parametrize(
    "placements, ndim, split, partial, reduction",
    [
        ([S0, R], 2, ((0,), ()), (), ReductionKind.SUM),
        ([R, S1], 2, ((), (1,)), (), ReductionKind.SUM),
        ([S0, S0], 2, ((0, 1), ()), (), ReductionKind.SUM),  # mesh axis order
        ([Shard(-1), S0], 3, ((1,), (), (0,)), (), ReductionKind.SUM),
        ([P, S1], 2, ((), (1,)), (0,), ReductionKind.SUM),
        ([PMAX, PMAX], 1, ((),), (0, 1), ReductionKind.MAX),
    ],
)
def test_placements_to_sharding_and_back(placements, ndim, split, partial, reduction):
    sharding = placements_to_sharding(placements, ndim)
    assert sharding == Sharding(split, partial, reduction)
    normalized = tuple(Shard(p.dim % ndim) if isinstance(p, Shard) else p for p in placements)
    assert sharding_to_placements(sharding, Mesh((2, 2))) == normalized
    assert sharding_to_placements(sharding, 2) == normalized


def test_sharding_to_placements_errors():
    with pytest.raises(ValueError, match=r"splits dimension 0 over mesh axes \[1, 0\]; placements can only express them in mesh axis order"):
        sharding_to_placements(Sharding(((1, 0),)), MESH23)
    with pytest.raises(ValueError, match="names mesh axis 2, but the mesh has rank 2"):
        sharding_to_placements(Sharding(((2,),)), MESH23)
    with pytest.raises(ValueError, match="mesh axis 0 is used by dimension 0 and dimension 1"):
        sharding_to_placements(Sharding(((0,), (0,))), MESH23)
    with pytest.raises(ValueError, match="no Partial placement for reduction 'product'"):
        sharding_to_placements(Sharding(((),), (0,), ReductionKind.PRODUCT), MESH23)


def test_placement_errors_name_placements_and_shape():
    x = rand(6, 4)
    with pytest.raises(ValueError, match=r"placements \(Shard\(2\), Replicate\(\)\) for a tensor of shape \(6, 4\): Shard\(2\) names dimension 2"):
        distribute_tensor(x, MESH23, [Shard(2), R])
    with pytest.raises(ValueError, match=r"Partial placements with different reduce_ops \(max, sum\)"):
        distribute_tensor(x, MESH23, [P, PMAX])
    with pytest.raises(ValueError, match=r"need one placement per mesh axis of Mesh\(\(2, 3\)"):
        distribute_tensor(x, MESH23, [S0])
    with pytest.raises(TypeError, match="is not a placement"):
        distribute_tensor(x, MESH4, ["shard"])


def test_uneven_split_is_a_clear_error():
    with pytest.raises(ValueError, match=r"dimension 1 of size 4 does not divide evenly over mesh axis 1 \('y', size 3\)"):
        distribute_tensor(rand(6, 4), MESH23, [R, S1])
    with pytest.raises(ValueError, match=r"dimension 0 of size 3 does not divide evenly over mesh axis 0 \('x', size 2\) and mesh axis 1 \('y', size 3\) \(6 chunks\)"):
        distribute_tensor(rand(3, 4), MESH23, [S0, S0])
    dt = distribute_tensor(rand(4, 6), MESH4, [S0])
    with pytest.raises(ValueError, match=r"dimension 1 of size 6 does not divide evenly over mesh axis 0 \('x', size 4\)"):
        dt.redistribute([S1])


# ---------------------------------------------------------------------------------------------
# distribute_tensor / full_tensor / to_local
# ---------------------------------------------------------------------------------------------


def all_placements(mesh, options=(S0, S1, R, P)):
    return list(itertools.product(options, repeat=mesh.ndim))


@pytest.mark.parametrize("mesh", [MESH4, MESH23], ids=str)
def test_distribute_full_tensor_round_trip(mesh):
    x = rand(12, 12)
    for placements in all_placements(mesh, (S0, S1, R, P, PMAX)):
        if P in placements and PMAX in placements:
            continue
        dt = distribute_tensor(x, mesh, placements)
        assert dt.shape == (12, 12) and dt.dtype == np.float64 and len(dt.local_arrays) == mesh.size
        np.testing.assert_array_equal(dt.full_tensor(), x, err_msg=str(placements))


def test_two_mesh_axes_split_one_dim_row_major():
    x = rand(12, 5)
    dt = distribute_tensor(x, MESH23, [S0, S0])
    assert dt.local_shape == (2, 5)
    for c0, c1 in MESH23.devices:
        k = c0 * 3 + c1
        np.testing.assert_array_equal(dt.to_local((c0, c1)), x[2 * k : 2 * k + 2])
    np.testing.assert_array_equal(dt.full_tensor(), x)
    # Split over both dims: device (c0, c1) holds row block c0 and column block c1.
    dt = distribute_tensor(rand(4, 6), MESH23, [S0, S1])
    np.testing.assert_array_equal(dt.to_local(5), dt.full_tensor()[2:4, 4:6])


def test_to_local_by_index_and_coords():
    dt = distribute_tensor(rand(4, 6), MESH23, [R, S1])
    assert dt.to_local(4) is dt.to_local((1, 1))
    with pytest.raises(IndexError):
        dt.to_local(6)
    with pytest.raises(IndexError):
        dt.to_local((2, 0))


def test_partial_sum_and_max_identities():
    x = rand(4, 3)
    dt = distribute_tensor(x, MESH23, [R, P])
    for (c0, c1), a in zip(MESH23.devices, dt.local_arrays):
        np.testing.assert_array_equal(a, x if c1 == 0 else np.zeros_like(x))
    dt = distribute_tensor(x, MESH23, [PMAX, S1])
    assert np.all(dt.to_local((1, 2)) == -np.inf)
    np.testing.assert_array_equal(dt.to_local((0, 2)), x[:, 2:3])
    np.testing.assert_array_equal(dt.full_tensor(), x)
    xi = np.arange(8, dtype=np.int32)
    dt = distribute_tensor(xi, MESH4, [Partial("min")])
    assert np.all(dt.to_local(3) == np.iinfo(np.int32).max)
    np.testing.assert_array_equal(dt.full_tensor(), xi)


def test_full_tensor_resolves_genuine_partials():
    terms = [rand(2, 3, seed=i) for i in range(3)] * 2
    dt = DTensor.from_local(terms, MESH23, [R, P])  # partial sums along y, the same along x
    assert dt.shape == (2, 3)
    np.testing.assert_allclose(dt.full_tensor(), terms[0] + terms[1] + terms[2])
    terms = [rand(2, 3, seed=i) for i in range(6)]
    dt = DTensor.from_local(terms, MESH23, [S0, PMAX])
    np.testing.assert_array_equal(
        dt.full_tensor(), np.concatenate([np.maximum.reduce(terms[:3]), np.maximum.reduce(terms[3:])])
    )


def test_dtensor_repr_and_local_shape_checks():
    dt = distribute_tensor(rand(4, 6), MESH23, [S0, Shard(-1)])
    assert repr(dt) == "DTensor(shape=(4, 6), dtype=float64, placements=(Shard(0), Shard(1)), mesh=Mesh((2, 3), ('x', 'y')))"
    with pytest.raises(ValueError, match=r"device 1 holds float64\[3\]"):
        DTensor([np.zeros(2), np.zeros(3), np.zeros(2), np.zeros(2)], MESH4, [S0], (8,))


# ---------------------------------------------------------------------------------------------
# redistribute
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mesh", [MESH4, MESH23], ids=str)
@pytest.mark.parametrize("options", [(S0, S1, R, P), (S0, S1, R, PMAX)], ids=["sum", "max"])
def test_redistribute_every_placement_pair(mesh, options):
    x = rand(12, 12)
    for src, dst in itertools.product(all_placements(mesh, options), repeat=2):
        moved = distribute_tensor(x, mesh, src).redistribute(dst)
        what = f"{src} -> {dst}"
        assert moved.placements == dst, what
        np.testing.assert_array_equal(moved.full_tensor(), x, err_msg=what)
        for got, want in zip(moved.local_arrays, distribute_tensor(x, mesh, dst).local_arrays):
            np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("mesh", [MESH4, MESH23], ids=str)
def test_redistribute_genuine_partial_sums(mesh):
    """Partial terms that are not (x, 0, 0, ...): what a split matmul leaves."""
    a, b = rand(12, 12, seed=1), rand(12, 12, seed=2)
    axis = mesh.ndim - 1
    n = mesh.shape[axis]
    terms = []
    for coords in mesh.devices:
        k = slice(coords[axis] * 12 // n, (coords[axis] + 1) * 12 // n)
        terms.append(a[:, k] @ b[k, :])  # the contraction dimension is split along `axis`
    placements = [R] * mesh.ndim
    placements[axis] = P
    dt = DTensor.from_local(terms, mesh, placements)
    for dst in all_placements(mesh):
        moved = dt.redistribute(dst)
        np.testing.assert_allclose(moved.full_tensor(), a @ b, rtol=1e-12, atol=1e-12, err_msg=str(dst))


def kinds(comms):
    return [(c.kind, c.mesh_axes) for c in comms]


@pytest.mark.parametrize(
    "mesh, src, dst, expected",
    [
        (MESH4, [S0], [R], [("all_gather", (0,))]),
        (MESH4, [P], [R], [("all_reduce", (0,))]),
        (MESH4, [P], [S1], [("reduce_scatter", (0,))]),
        (MESH4, [R], [S1], [("all_slice", (0,))]),
        (MESH4, [S0], [S1], [("all_to_all", (0,))]),
        (MESH4, [R], [P], []),  # local: member 0 keeps the data, the others zeros
        (MESH4, [S0], [P], [("all_gather", (0,))]),
        (MESH4, [P], [PMAX], [("all_reduce", (0,))]),
        (MESH4, [S0], [S0], []),
        (MESH23, [S0, S1], [R, R], [("all_gather", (0,)), ("all_gather", (1,))]),
        (MESH23, [S0, S0], [R, R], [("all_gather", (1,)), ("all_gather", (0,))]),  # inner axis first
        (MESH23, [S0, S0], [S0, R], [("all_gather", (1,))]),
        (MESH23, [S0, S0], [R, S0], [("all_gather", (1,)), ("all_gather", (0,)), ("all_slice", (1,))]),
        (MESH23, [R, R], [S0, S0], [("all_slice", (0,)), ("all_slice", (1,))]),
        (MESH23, [S0, S1], [S1, S0], [("all_gather", (0,)), ("all_to_all", (1,)), ("all_slice", (0,))]),
        (MESH23, [P, S0], [S0, R], [("all_gather", (1,)), ("reduce_scatter", (0,))]),
        (MESH23, [S0, P], [R, R], [("all_reduce", (1,)), ("all_gather", (0,))]),  # reduce the small data
        (MESH23, [P, R], [R, S1], [("all_slice", (1,)), ("all_reduce", (0,))]),  # slice first
        (MESH23, [P, P], [S0, S1], [("reduce_scatter", (0,)), ("reduce_scatter", (1,))]),
        (MESH23, [S1, R], [R, S1], [("all_gather", (0,)), ("all_slice", (1,))]),
    ],
    ids=lambda v: str(v) if isinstance(v, list) else None,
)
def test_collectives_per_transition(mesh, src, dst, expected):
    x = rand(12, 12)
    dt = distribute_tensor(x, mesh, src)
    with record_comms() as log:
        moved = dt.redistribute(dst)
    assert kinds(log) == expected
    assert kinds(moved.comms) == expected
    np.testing.assert_array_equal(moved.full_tensor(), x)


def test_comm_bytes_and_nested_records():
    x = rand(8, 8)  # float64: a [S0] shard on 4 devices is 2x8x8 = 128 bytes
    dt = distribute_tensor(x, MESH4, [S0])
    with record_comms() as outer:
        dt.redistribute([R])
        with record_comms() as inner:
            dt.redistribute([S1])
        distribute_tensor(x, MESH4, [P]).redistribute([R])
    assert [(c.kind, c.bytes) for c in outer] == [
        ("all_gather", 3 * 128),  # (group - 1) * local bytes
        ("all_to_all", 3 * 128 // 4),
        ("all_reduce", 2 * 3 * 512 // 4),
    ]
    assert [c.kind for c in inner] == ["all_to_all"]
    assert outer[0].total_bytes == 4 * 384 and outer[0].detail == "dim 0"
    assert dt.redistribute([R]).redistribute([S0]).comms[0].bytes == 0  # all_slice sends nothing
    assert dt.comms == ()


def test_plan_is_per_mesh_axis_steps():
    src = placements_to_sharding([S0, S1], 2)
    dst = placements_to_sharding([S1, S0], 2)
    steps = plan_redistribute(src, dst, (2, 3))
    assert [(s.kind, s.mesh_axis, s.dim, s.concat_dim) for s in steps] == [
        ("all_gather", 0, 0, None),
        ("all_to_all", 1, 0, 1),
        ("all_slice", 0, 1, None),
    ]


# ---------------------------------------------------------------------------------------------
# with_sharding_constraint
# ---------------------------------------------------------------------------------------------


def test_constraint_eager_is_identity():
    x = rand(8, 3)
    assert with_sharding_constraint(x, MESH4, [S0]) is x
    assert with_sharding_constraint(x, MESH23, [R, S1]) is x
    assert ig.distributed.with_sharding_constraint is with_sharding_constraint


def test_constraint_errors():
    x = rand(8, 3)
    with pytest.raises(ValueError, match="a sharding constraint cannot be Partial"):
        with_sharding_constraint(x, MESH4, [P])
    with pytest.raises(ValueError, match=r"dimension 1 of size 3 does not divide evenly over mesh axis 0 \('x', size 4\)"):
        with_sharding_constraint(x, MESH4, [S1])
    with pytest.raises(ValueError, match=r"Shard\(2\) names dimension 2"):
        ig.trace(lambda x: with_sharding_constraint(x, MESH4, [Shard(2)]), ig.ShapeDtype((8, 3)))
    with pytest.raises(ValueError, match="a sharding constraint cannot be Partial"):
        ig.trace(lambda x: with_sharding_constraint(x, MESH4, [P]), ig.ShapeDtype((8, 3)))


def test_constraint_traced_ir():
    def f(x):
        y = with_sharding_constraint(x * 2, MESH4, [S0])
        return with_sharding_constraint(y, MESH4, [Shard(-1)])

    program = ig.trace(f, ig.ShapeDtype((8, 4)))
    text = str(program)
    assert text.count("shard.grid @mesh(shape = 4)") == 1
    assert text.index("shard.grid") < text.index("func.func")
    assert "shard.sharding @mesh split_axes = [[0], []] : !shard.sharding" in text
    assert "shard.sharding @mesh split_axes = [[], [0]] : !shard.sharding" in text
    assert text.count("shard.shard ") == 2
    assert program.out_avals == [ig.ShapeDtype((8, 4))]
    program.module.verify()
    # The ops carry the user's source line.
    assert "test_distributed_api.py" in program.as_text(debuginfo=True).split("= shard.shard ")[1].split("\n")[0]


def test_constraint_traced_two_meshes_and_name_clash():
    mesh_b = Mesh((2, 3), ("dp", "tp"), name="grid2")

    def f(x):
        return with_sharding_constraint(with_sharding_constraint(x, MESH4, [S0]), mesh_b, [S0, S1])

    text = str(ig.trace(f, ig.ShapeDtype((12, 6))))
    assert "shard.grid @mesh(shape = 4)" in text and "shard.grid @grid2(shape = 2x3)" in text
    assert "shard.sharding @grid2 split_axes = [[0], [1]]" in text

    def clash(x):
        return with_sharding_constraint(with_sharding_constraint(x, MESH4, [S0]), MESH23, [S0, R])

    with pytest.raises(ValueError, match="already has grid @mesh of shape 4; give different meshes different names"):
        ig.trace(clash, ig.ShapeDtype((12, 6)))


def test_constraint_under_traced_grad():
    """Inside ig.grad the constraint lives in the differentiated function; the grid is the
    module's, once."""

    def loss(x):
        return ig.sum(with_sharding_constraint(x, MESH4, [S0]) ** 2)

    text = str(ig.trace(ig.grad(loss), ig.ShapeDtype((8, 3))))
    assert text.count("shard.grid @mesh(shape = 4)") == 1
    assert "autodiff.value_and_grad" in text and "shard.shard" in text


_HAS_SHARD_RULE = importlib.util.find_spec("irgrad.autodiff.rules.shard") is not None


@pytest.mark.skipif(not _HAS_SHARD_RULE, reason="awaits the autodiff rule of shard.shard (irgrad/autodiff/rules/shard.py)")
def test_constraint_gradient_values():
    def loss(x):
        y = with_sharding_constraint(x, MESH4, [S0])
        return ig.sum(y * y * 3.0)

    x = rand(8, 3).astype(np.float32)
    np.testing.assert_allclose(ig.grad(loss)(x), 6 * x, rtol=1e-6)

    def loss2(x):  # two meshes, a 2-D split, a constraint on an intermediate value
        y = with_sharding_constraint(ig.sin(x), Mesh((2, 3), name="g"), [S0, S1])
        return ig.sum(with_sharding_constraint(y * x, MESH4, [R]))

    x = rand(4, 6).astype(np.float32)
    program = ig.trace(ig.grad(loss2), x)
    assert "shard.grid @g(shape = 2x3)" in str(program)
    np.testing.assert_allclose(program(x), np.sin(x) + x * np.cos(x), rtol=1e-5, atol=1e-6)

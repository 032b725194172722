"""ig.distributed.jit: data- and tensor-parallel gradients on a simulated mesh equal the
single-device ones (float64), and cost exactly the collectives the placements imply."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from irgrad.backends.interpreter import collectives
from irgrad.distributed import Mesh, Replicate, Shard


def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = ig.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return ig.mean((out - y) ** 2)


def _data(seed: int = 0, batch: int = 16):
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in [(6, 8), (8,), (8, 3), (3,)]]
    x = rng.standard_normal((batch, 6))
    y = rng.standard_normal((batch, 3))
    return params, x, y


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_data_parallel_gradient_is_the_single_device_gradient(backend: str) -> None:
    params, x, y = _data()
    mesh = Mesh((4,))
    step = ig.distributed.jit(ig.value_and_grad(mlp_loss), mesh, in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
    value, grads = step(params, x, y)
    value0, grads0 = ig.value_and_grad(mlp_loss)(params, x, y)
    np.testing.assert_allclose(value, value0, rtol=1e-13)
    for g, g0 in zip(grads, grads0):
        np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-13)
    # DDP's communication: one all-reduce of the loss and one per parameter gradient, nothing
    # else: in the devices' program (convert-shard-to-mpi), arrays this small are allgathered
    # whole and reduced in order.
    assert step.lower(params, x, y).as_text("spmd").count("shard.all_reduce") == 5
    for device in step.stats:
        assert dict(device.collectives) == {"all_gather": 5}
        expected = sum(collectives.bytes_sent("all_gather", p.nbytes, 4) for p in [np.float64(0), *params])
        assert device.bytes_sent == expected


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_tensor_parallel_gradient_is_the_single_device_gradient(backend: str) -> None:
    """Megatron's MLP: w1 (and b1) split by columns, w2 by rows, over 2 devices."""
    params, x, y = _data(1)
    mesh = Mesh((2,), ("tp",))
    placements = ([[Shard(1)], [Shard(0)], [Shard(0)], [Replicate()]], None, None)
    step = ig.distributed.jit(ig.value_and_grad(mlp_loss), mesh, in_placements=placements, backend=backend)
    value, grads = step(params, x, y)
    value0, grads0 = ig.value_and_grad(mlp_loss)(params, x, y)
    np.testing.assert_allclose(value, value0, rtol=1e-13)
    for g, g0 in zip(grads, grads0):
        np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-13)
    text = step.lower(params, x, y).as_text("spmd")
    # Sharded parameters keep sharded gradients (no gather); the hidden layer is never gathered.
    assert "shard.all_gather" not in text
    assert "shard.all_to_all" not in text
    assert "tensor<6x4xf64>" in text  # the local w1: 8 columns over 2 devices


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_two_dimensional_mesh_data_and_tensor_parallel(backend: str) -> None:
    params, x, y = _data(2)
    mesh = Mesh((2, 2), ("dp", "tp"))
    w_cols, w_rows = [Replicate(), Shard(1)], [Replicate(), Shard(0)]
    batch = [Shard(0), Replicate()]
    placements = ([w_cols, [Replicate(), Shard(0)], w_rows, None], batch, batch)
    step = ig.distributed.jit(ig.value_and_grad(mlp_loss), mesh, in_placements=placements, backend=backend)
    value, grads = step(params, x, y)
    value0, grads0 = ig.value_and_grad(mlp_loss)(params, x, y)
    np.testing.assert_allclose(value, value0, rtol=1e-13)
    for g, g0 in zip(grads, grads0):
        np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_data_parallel_training_follows_single_device_training(backend: str) -> None:
    params, x, y = _data(3)

    def sgd_step(params, x, y):
        loss, grads = ig.value_and_grad(mlp_loss)(params, x, y)
        return loss, [p - 0.1 * g for p, g in zip(params, grads)]

    mesh = Mesh((4,))
    step = ig.distributed.jit(sgd_step, mesh, in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
    p_dist, p_one = params, params
    for _ in range(5):
        loss, p_dist = step(p_dist, x, y)
        loss0, p_one = sgd_step(p_one, x, y)
        np.testing.assert_allclose(loss, loss0, rtol=1e-12)
    for a, b in zip(p_dist, p_one):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


def test_out_placements_and_stages() -> None:
    mesh = Mesh((4,))

    def f(x):
        return ig.exp(x) * 2.0

    x = np.random.default_rng(4).standard_normal((8, 4))
    step = ig.distributed.jit(f, mesh, in_placements=([Shard(0)],), out_placements=[Shard(1)])
    np.testing.assert_allclose(step(x), np.exp(x) * 2.0, rtol=1e-14)
    lowered = step.lower(x)
    assert "shard.shard" in lowered.as_text("global")
    assert "shard.all_to_all" in lowered.as_text("spmd")
    assert [dict(d.collectives) for d in step.stats] == [{"all_to_all": 1}] * 4
    with pytest.raises(ValueError, match="unknown stage"):
        lowered.as_text("llvm")


def test_a_new_signature_traces_again() -> None:
    mesh = Mesh((2,))
    step = ig.distributed.jit(lambda x: ig.sum(x * x), mesh, in_placements=([Shard(0)],))
    a, b = np.arange(4.0), np.arange(6.0)
    assert step(a) == pytest.approx(14.0)
    assert step(b) == pytest.approx(55.0)
    assert len(step._lowered) == 2
    step(a + 1)
    assert len(step._lowered) == 2


def test_errors_name_the_argument_and_the_mesh() -> None:
    mesh = Mesh((4,))
    step = ig.distributed.jit(lambda x: x + 1.0, mesh, in_placements=([Shard(0)],))
    with pytest.raises(Exception, match=r"dimension 0 .*size 6.*4"):
        step(np.ones((6, 2)))
    with pytest.raises(ValueError, match="1 in_placements for 2 arguments"):
        ig.distributed.jit(lambda x, y: x + y, mesh, in_placements=([Shard(0)],))(np.ones(4), np.ones(4))


def test_constraints_compile_for_one_device() -> None:
    """On one device a constraint is the identity: ig.jit (CPU) erases it."""
    mesh = Mesh((4,))

    def loss(w, x):
        x = ig.distributed.with_sharding_constraint(x, mesh, [Shard(0)])
        return ig.sum(ig.tanh(x @ w))

    rng = np.random.default_rng(5)
    w, x = rng.standard_normal((3, 2)), rng.standard_normal((8, 3))
    np.testing.assert_allclose(ig.jit(ig.grad(loss))(w, x), ig.grad(loss)(w, x), rtol=1e-13)
    assert "shard." not in ig.jit(ig.grad(loss)).lower(w, x).as_text("linalg")


@pytest.mark.parametrize("backend", ["cpu", "interp"])
def test_data_parallel_cnn_costs_only_the_gradient_all_reduces(backend: str) -> None:
    """Convolution, pooling and their gradients (convolutions over the split images, the pooling
    mask's gather and scatter) all stay on each device's images."""

    def loss(params, x, y):
        k, w = params
        h = ig.max_pool2d(ig.relu(ig.conv2d(x, k, padding=1)), 2)
        return ig.mean((h.reshape(h.shape[0], -1) @ w - y) ** 2)

    rng = np.random.default_rng(6)
    params = [rng.standard_normal((4, 2, 3, 3)), rng.standard_normal((64, 3))]
    x, y = rng.standard_normal((8, 2, 8, 8)), rng.standard_normal((8, 3))
    step = ig.distributed.jit(ig.value_and_grad(loss), Mesh((4,)), in_placements=(None, [Shard(0)], [Shard(0)]), backend=backend)
    value, grads = step(params, x, y)
    value0, grads0 = ig.value_and_grad(loss)(params, x, y)
    np.testing.assert_allclose(value, value0, rtol=1e-13)
    for g, g0 in zip(grads, grads0):
        np.testing.assert_allclose(g, g0, rtol=1e-12, atol=1e-13)
    assert step.lower(params, x, y).as_text("spmd").count("shard.all_reduce") == 3
    assert [dict(d.collectives) for d in step.stats] == [{"all_gather": 3}] * 4


def test_data_parallel_cross_entropy_moves_only_the_gradients_and_the_loss() -> None:
    """The label lookup of softmax_cross_entropy is elementwise along the batch, so a batch
    split over devices needs no log-probabilities or labels of other devices: the processes'
    program all-gathers the gradient (a small all-reduce) and the loss, nothing else, and the
    result is the single-device one."""

    def loss(w, x, y):
        return ig.losses.softmax_cross_entropy(x @ w, y)

    rng = np.random.default_rng(3)
    w, x = rng.standard_normal((8, 4)), rng.standard_normal((16, 8))
    y = rng.integers(-4, 4, size=16)  # negative labels wrap, as take_along_axis's do
    mesh = Mesh((2,), ("d",))
    dj = ig.distributed.jit(ig.value_and_grad(loss), mesh, in_placements=(None, [Shard(0)], [Shard(0)]))
    text = dj.lower(w, x, y).as_text("mpi")
    moved = sorted(line.split(":", 1)[1].strip() for line in text.splitlines() if "mpi.allgather(" in line or "mpi.alltoall(" in line)
    assert moved == ["tensor<8x4xf64> -> tensor<2x8x4xf64>", "tensor<f64> -> tensor<2xf64>"], moved
    value, grad = dj(w, x, y)
    value1, grad1 = ig.value_and_grad(loss)(w, x, y)
    np.testing.assert_allclose(value, value1, rtol=1e-13)
    np.testing.assert_allclose(grad, grad1, rtol=1e-12, atol=1e-14)

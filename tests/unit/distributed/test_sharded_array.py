"""ShardedArray, from_local and make_array_from_process_local_data in a 1-process job, and the
job functions without an MPI launch (a plain `python` is a 1-process job; no mpi4py needed)."""

import numpy as np
import pytest

import irgrad as ig
from irgrad.distributed import Mesh, Partial, Replicate, Shard
from irgrad.distributed import process
from irgrad.distributed.sharded_array import chunk_slices, local_chunk


def test_a_plain_python_process_is_a_one_process_job(monkeypatch):
    for variable in process.LAUNCH_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    assert not process.launched_by_mpi()
    assert ig.distributed.process_count() == 1 and ig.distributed.process_index() == 0


def test_from_local_computes_the_global_shape():
    mesh = Mesh((4, 2))
    a = ig.distributed.from_local(np.ones((3, 5)), mesh, [Shard(0), Shard(1)])
    assert a.shape == (12, 10) and a.dtype == np.float64 and not a.is_replicated
    b = ig.distributed.from_local(np.ones((3, 5)), mesh, [Replicate(), Shard(0)])
    assert b.shape == (6, 5)
    r = ig.distributed.from_local(np.arange(3.0), mesh, [Replicate(), Replicate()])
    assert r.is_replicated and np.array_equal(np.asarray(r), np.arange(3.0)) and np.array_equal(r.full_tensor(), np.arange(3.0))


def test_make_array_checks_the_global_shape():
    mesh = Mesh((2,))
    a = ig.distributed.make_array_from_process_local_data(mesh, [Shard(0)], np.ones((3, 2)), (6, 2))
    assert a.shape == (6, 2)
    with pytest.raises(ValueError, match=r"makes a global shape \(6, 2\), not \(5, 2\)"):
        ig.distributed.make_array_from_process_local_data(mesh, [Shard(0)], np.ones((3, 2)), (5, 2))


def test_partial_local_data_is_refused():
    with pytest.raises(ValueError, match="Partial placements are not supported"):
        ig.distributed.from_local(np.ones(2), Mesh((2,)), [Partial()])


def test_chunks_are_row_major_over_the_mesh_axes():
    grid = (2, 3)
    value = np.arange(6 * 4).reshape(6, 4)
    split = ((0, 1), ())  # dimension 0 over both axes, axis 0 first
    pieces = [local_chunk(value, split, grid, device, "x") for device in range(6)]
    assert [p[0, 0] for p in pieces] == [0, 4, 8, 12, 16, 20]
    assert chunk_slices(split, grid, 4, (1, 4)) == (slice(4, 5), slice(0, 4))
    with pytest.raises(ValueError, match="does not split into 6 chunks"):
        local_chunk(np.ones((4, 4)), split, grid, 0, "x")


def test_the_timeout_must_be_positive(monkeypatch):
    with pytest.raises(ValueError, match="timeout must be positive"):
        process._configured_timeout(0)
    monkeypatch.setenv("IRGRAD_COLLECTIVE_TIMEOUT", "soon")
    with pytest.raises(ValueError, match="IRGRAD_COLLECTIVE_TIMEOUT='soon'"):
        process._configured_timeout(None)
    monkeypatch.setenv("IRGRAD_COLLECTIVE_TIMEOUT", "2.5")
    assert process._configured_timeout(None) == 2.5


def test_a_one_process_job_takes_sharded_arrays_as_whole_arrays():
    mesh = Mesh((1,))

    def f(x):
        return ig.sum(x * 2.0)

    step = ig.distributed.jit(f, mesh, in_placements=([Shard(0)],))
    x = np.arange(6.0).reshape(3, 2)
    assert float(step(ig.distributed.from_local(x, mesh, [Shard(0)]))) == float(ig.jit(f)(x))
    assert "mpi" in step.lower(x).modules

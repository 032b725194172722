"""distributed.jit on real processes (1, 2 and 4 on this machine): data-parallel,
tensor-parallel and fully-sharded-parameter gradients equal the single-device ones (float64),
are bit-identical across processes and to the simulated grid, and a training loop (steps from
Python, and a fori_loop in one program) follows single-device training."""

import pytest

from _mpi_util import launch


@pytest.mark.parametrize("n, backend", [(1, "cpu"), (2, "cpu"), (4, "cpu"), (2, "interp")])
def test_parallel_training_on_processes(n, backend):
    job = launch("parallel_training", n, backend, timeout=420)
    assert job.returncode == 0, job.describe()
    results = job.results
    assert sorted(results) == list(range(n)), job.describe()
    for rank, result in results.items():
        assert result["failures"] == [], f"process {rank}: {result['failures']}"
        # DDP's communication: one all-reduce per gradient and one for the loss.
        assert result["dp"] == ({"all_reduce": 5} if n > 1 else result["dp"])
        if n > 1:  # FSDP: parameters all-gathered before use, gradients reduce-scattered
            assert result["fsdp"]["reduce_scatter"] == 4 and result["fsdp"]["all_gather"] >= 2
    first = results[0]["digests"]
    assert len(first) >= 8
    for rank, result in results.items():
        assert result["digests"] == first, f"process {rank}'s replicated results differ from process 0's"

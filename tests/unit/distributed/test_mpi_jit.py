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
        if n > 1:
            # Processes run convert-shard-to-mpi's program: DDP's one all-reduce per gradient
            # and one for the loss are 5 allgathers of these small arrays, reduced in order.
            assert result["dp"] == {"all_gather": 5}
            # FSDP: 3 parameters all-gathered before use, 4 gradients reduce-scattered (alltoall)
            assert result["fsdp"]["all_to_all"] >= 4 and result["fsdp"]["all_gather"] >= 3
            # The fori_loop of 5 steps is one call: its 20 gradient allgathers counted in it.
            assert result["loop"] == {"all_gather": 20}
    first = results[0]["digests"]
    assert len(first) >= 8
    for rank, result in results.items():
        assert result["digests"] == first, f"process {rank}'s replicated results differ from process 0's"

"""Collectives between real processes (2 and 4 on this machine) are bit-identical to the
simulated grid's definition, for every group of a 1-d and a 2-d grid, and count the bytes a
ring would send."""

import pytest

from _mpi_util import launch


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_matches_the_simulated_grid_bit_for_bit(n):
    job = launch("collectives", n)
    assert job.returncode == 0, job.describe()
    results = job.results
    assert sorted(results) == list(range(n)), job.describe()
    for rank, result in results.items():
        assert result["failures"] == [], f"process {rank}: {result['failures'][:10]}"
        assert result["checks"] > 40
        # all_to_all + all_gather of chunks: 2 (g-1)/g of 800 kB, up to chunk rounding
        assert abs(result["bytes"] - result["expected_bytes"]) <= 8 * n

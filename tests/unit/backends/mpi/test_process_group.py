"""Faults in a multi-process job end it with an error naming the process, never a hang: an
exception on one process, a process that stops answering (the collective's deadline), processes
running different programs, and processes running different numbers of steps. Each job runs
under a hard timeout far above the deadline it tests."""

import pytest

from _mpi_util import launch


@pytest.mark.parametrize("n", [2, 4])
def test_an_exception_on_one_process_ends_the_job(n):
    job = launch("faults", n, "raise", timeout=120)
    assert job.returncode != 0, job.describe()
    assert f"process 1 of {n} failed" in job.stderr and "ValueError: boom on purpose" in job.stderr, job.describe()
    assert "finished" not in job.stdout


def test_a_stuck_process_is_named_when_the_deadline_passes():
    job = launch("faults", 2, "stuck", "3", timeout=120)
    assert job.returncode != 0, job.describe()
    assert "CollectiveTimeout" in job.stderr, job.describe()
    assert "process 0 of 2 waited 3 s at mpi.allgather over grid axes [0]" in job.stderr
    assert "for process(es) [1]" in job.stderr
    assert "faults.py:28:" in job.stderr  # the user's line that made the reduced value


def test_a_late_process_is_named_by_the_compiled_collective_s_deadline():
    job = launch("faults", 2, "late", "3", timeout=120)
    assert job.returncode != 0, job.describe()
    assert "CollectiveTimeout" in job.stderr, job.describe()
    assert "process 0 of 2: mpi.allgather over grid axes [0] of float64[" in job.stderr
    assert "did not complete within 3 s" in job.stderr
    assert "faults.py:28:" in job.stderr  # the user's line that made the reduced value


def test_an_mpi_error_in_a_compiled_collective_is_an_error_naming_it():
    job = launch("faults", 2, "mpi_error", timeout=120)
    assert job.returncode != 0, job.describe()
    assert "CollectiveError" in job.stderr, job.describe()
    assert "mpi.allgather over grid axes [0] of float64[" in job.stderr
    assert "failed in the MPI library: Invalid communicator" in job.stderr, job.describe()


def test_processes_running_different_programs_fail_at_the_first_collective():
    job = launch("faults", 2, "shapes", timeout=120)
    assert job.returncode != 0, job.describe()
    assert "RanksDisagree" in job.stderr and "processes run different programs" in job.stderr, job.describe()
    assert "float64[12, 3]" in job.stderr and "float64[8, 3]" in job.stderr


def test_a_process_that_runs_fewer_steps_is_named_by_the_others():
    job = launch("faults", 2, "steps", timeout=120)
    assert job.returncode != 0, job.describe()
    assert "process 0 finished its script without reaching it" in job.stderr, job.describe()

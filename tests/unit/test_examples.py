"""The example scripts run to completion (they are documentation; broken docs are bugs)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_example(script: str) -> subprocess.CompletedProcess:
    """Runs examples/<script> in a fresh interpreter from the repository root; it must succeed."""
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", script)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("script", ["mlp.py", "cnn.py", "rnn.py"])
def test_example_runs(script):
    result = run_example(script)
    assert "func.func" in result.stdout  # each example prints its traced IR


def test_mixed_precision_example_skips_overflow_and_trains():
    result = run_example("mixed_precision.py")
    lines = result.stdout.strip().splitlines()
    skipped = int(lines[-1].split()[1])
    assert skipped >= 9  # 2^24 down to 2^15, where the scaled gradients fit in float16
    last = lines[-2].split()
    loss16, loss32 = float(last[4]), float(last[7])
    assert loss16 < 0.05 and loss32 < 0.05, result.stdout


def test_data_parallel_example_matches_one_device():
    result = run_example("data_parallel.py")
    assert result.stdout.count("shard.all_reduce") == 5  # one per parameter gradient, one for the loss
    for line in result.stdout.splitlines():
        if line.startswith("step"):
            words = line.split()
            assert words[4] == words[7], line  # the same loss, to 6 digits
    difference = float(result.stdout.strip().splitlines()[-1].split()[-1])
    assert difference < 1e-12


def test_dp_sgd_example_uses_per_example_gradients_and_trains():
    result = run_example("dp_sgd.py")
    lines = result.stdout.strip().splitlines()
    assert float(lines[0].split()[-1]) < 1e-5  # vmap(grad) == grad one example at a time (float32)
    assert float(lines[-2].split()[3]) < 0.3  # the loss after 40 noisy, clipped steps
    assert float(lines[-1].split()[-1]) >= 0.9  # training accuracy


def test_transformer_example_learns_the_next_token():
    result = run_example("transformer.py")
    assert "func.func" in result.stdout and "nn.matmul" in result.stdout
    losses = [float(line.split()[-1]) for line in result.stdout.splitlines() if line.startswith("step")]
    assert losses[0] > 2.0 and losses[-1] < 0.05, losses  # from about log(16) to near 0


def test_matrix_completion_example_recovers_the_unseen_entries():
    result = run_example("matrix_completion.py")
    assert "nn.svd" in result.stdout  # the penalty's gradient goes through the op's rule
    lines = result.stdout.strip().splitlines()
    errors = [float(line.split()[-1]) for line in lines if line.startswith(("start:", "step"))]
    assert errors[0] == 1.0 and errors[-1] < 0.2, result.stdout  # from zeros to within 20%
    top = [float(v) for v in lines[-1].split(":")[1].split("(")[0].split()]
    assert top[2] > 10 * top[3], result.stdout  # rank 3: a gap after the third singular value


@pytest.mark.parametrize(
    "script, n", [("data_parallel.py", 4), ("tensor_parallel.py", 2), ("fsdp.py", 2)]
)
def test_distributed_example_on_processes(script, n):
    """examples/distributed/ under `mpiexec -n 2` and `-n 4`: the loss of every step equals
    single-device training to the printed digits, and the trained weights to 1e-12."""
    from irgrad.distributed.launch import find_mpiexec

    result = subprocess.run(
        [find_mpiexec(), "-n", str(n), sys.executable, os.path.join(ROOT, "examples", "distributed", script)],
        capture_output=True, text=True, cwd=ROOT, timeout=400, env={**os.environ, "IRGRAD_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    steps = [line.split() for line in lines if line.startswith("step")]
    assert steps and all(words[-4] == words[-1] for words in steps), result.stdout
    assert f"{n} process(es)" in lines[0]
    assert float(lines[-1].split()[-1]) < 1e-12
    if script == "data_parallel.py":
        assert f"bit-identical on all {n} processes: True" in result.stdout

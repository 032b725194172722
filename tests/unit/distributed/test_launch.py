"""`python -m irgrad.distributed.launch`: the mpiexec command it builds, its argument errors,
and a real 2-process job through it."""

import subprocess
import sys
from pathlib import Path

import pytest

from irgrad.distributed import launch

ROOT = Path(__file__).resolve().parents[3]


def test_the_command_runs_this_python_on_n_processes(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("node1:2\nnode2:2\n")
    args = launch.parse(["-n", "4", "--hostfile", str(hosts), "train.py", "--lr", "0.1"])
    mpiexec = launch.find_mpiexec()
    cmd = launch.command(args, mpiexec)
    assert cmd[:3] == [mpiexec, "-n", "4"]
    assert cmd[-4:] == [sys.executable, "train.py", "--lr", "0.1"]
    assert ("-f" in cmd or "--hostfile" in cmd) and str(hosts) in cmd


def test_a_module_runs_as_python_dash_m():
    args = launch.parse(["-n", "2", "-m", "examples.train", "--steps", "3"])
    assert launch.command(args, "mpiexec")[-4:] == ["-m", "examples.train", "--steps", "3"]


@pytest.mark.parametrize(
    "argv, message",
    [(["-n", "0", "a.py"], "-n must be at least 1"), (["-n", "2"], "name a script"),
     (["-n", "2", "--hostfile", "/nonexistent", "a.py"], "does not exist"),
     (["-n", "2", "--timeout", "-1", "a.py"], "--timeout must be positive")],
)
def test_bad_arguments_are_named(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        launch.parse(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_a_job_through_the_launcher(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text(
        "import irgrad as ig\n"
        "print('process', ig.distributed.process_index(), 'of', ig.distributed.process_count(), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "irgrad.distributed.launch", "-n", "2", "--timeout", "30", str(script)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("process")) == [
        "process 0 of 2", "process 1 of 2"]

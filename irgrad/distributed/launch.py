"""`python -m irgrad.distributed.launch -n 4 train.py [args]`: start a job of 4 processes.

torchrun's shape over the MPI launcher: it finds `mpiexec` (--mpiexec, $IRGRAD_MPIEXEC, the one
installed beside this Python by the `mpich` wheel of the `dist` extra, then $PATH), adds what
the implementation needs (Open MPI: --oversubscribe, and --allow-run-as-root as root) and runs

    mpiexec -n 4 [-f HOSTFILE] python train.py [args]

with `--hostfile` for several machines (MPICH/hydra lines `host:processes`, Open MPI lines
`host slots=processes`; the same Python environment at the same path on every host) and
`--timeout` for the collectives' deadline ($IRGRAD_COLLECTIVE_TIMEOUT). The job's exit status is
the launcher's. Plain `mpiexec -n 4 python train.py` works the same way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path


def find_mpiexec(explicit: str | None = None) -> str:
    """The mpiexec to run, or SystemExit with what to install."""
    candidates = [explicit, os.environ.get("IRGRAD_MPIEXEC"), str(Path(sys.executable).parent / "mpiexec")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("mpiexec")
    if found:
        return found
    raise SystemExit("irgrad.distributed.launch: no mpiexec found; pip install 'irgrad[dist]' (the mpich wheel brings one)")


def is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout + out.stderr


def command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line for `args`."""
    cmd = [mpiexec, "-n", str(args.nprocs)]
    if is_open_mpi(mpiexec):
        cmd.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if args.hostfile:
            cmd += ["--hostfile", args.hostfile]
    elif args.hostfile:
        cmd += ["-f", args.hostfile]
    program = ["-m", args.module] if args.module else [args.script]
    return [*cmd, sys.executable, *program, *args.args]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m irgrad.distributed.launch", description="Run a script as a job of several processes, one per device."
    )
    parser.add_argument("-n", "--nprocs", type=int, required=True, help="number of processes")
    parser.add_argument("--hostfile", help="machines to run on (MPICH: host:n per line; Open MPI: host slots=n)")
    parser.add_argument("--timeout", type=float, help="seconds a collective waits before failing")
    parser.add_argument("--mpiexec", help="the mpiexec to use")
    parser.add_argument("-m", dest="module", help="run a module, as python -m (the rest of the line is its arguments)")
    parser.add_argument("script", nargs="?", help="the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    module_args: list[str] | None = None
    if "-m" in argv:  # everything after `-m MODULE` belongs to the module, as with python -m
        at = argv.index("-m")
        argv, module_args = argv[: at + 2], argv[at + 2:]
    args = parser.parse_args(argv)
    if module_args is not None:
        args.args = module_args
    if args.nprocs < 1:
        parser.error(f"-n must be at least 1, got {args.nprocs}")
    if not args.module and not args.script:
        parser.error("name a script (or -m module) to run")
    if args.hostfile and not Path(args.hostfile).is_file():
        parser.error(f"hostfile {args.hostfile} does not exist")
    if args.timeout is not None and not args.timeout > 0:
        parser.error(f"--timeout must be positive seconds, got {args.timeout}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    if args.timeout is not None:
        env["IRGRAD_COLLECTIVE_TIMEOUT"] = str(args.timeout)
    try:
        return subprocess.run(command(args, find_mpiexec(args.mpiexec)), env=env).returncode
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

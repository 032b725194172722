"""Every op, the example and gradient programs, and W1/W2/W4 on this machine's NVIDIA GPU,
compared with the reference interpreter; prints one table (and writes build/gpu_check.json).

Run by tools/gpu_check.sh, which installs pycuda first. It needs a CUDA device: without one
it says why and exits 2. Exit code 1 when any check disagrees.

Agreement: integers and booleans exactly; floats within the CPU backend's tolerances
(f32 1e-5 and f64 1e-12 relative, f16/bf16 one ulp; relative to the largest magnitude for
the results of long computations), NaN and infinities where the interpreter has them.
The GPU is not expected to be bitwise equal: libdevice's functions are within an ulp or two
of numpy's, NVPTX contracts multiply-adds into FMAs, and reductions add in tree order.
The W1/W2 training steps are decided in float64: in float32, a relu input within rounding
of 0 may fall on the other side when cuBLAS adds in another order than numpy, which changes
that unit's gradient row (W2 has a million relu inputs); the float32 run is reported, and
explained output by output when it differs (against float64, run to run, host GEMMs).

    .venv/bin/python benchmarks/gpu_check.py [--only ops|programs|cache|workloads] [--emulate]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The GPU tests' programs and the op table are reused from tests/unit (and its helpers).
TEST_PATHS = [str(ROOT / "tests" / "unit" / sub) for sub in ("", "backends/gpu", "lowering/nn_to_linalg")]
sys.path[:0] = [*TEST_PATHS, str(ROOT / "benchmarks")]

import workloads as wl  # noqa: E402  (first: it sets thread counts before numpy loads)

import numpy as np  # noqa: E402


def device_arch() -> tuple[str, str]:
    """(sm_XY of device 0, a description of it)."""
    import pycuda.driver as cuda

    cuda.init()
    device = cuda.Device(0)
    major, minor = device.compute_capability()
    memory = device.total_memory() / 2**30
    driver = cuda.get_driver_version()
    return f"sm_{major}{minor}", f"{device.name()} (sm_{major}{minor}, {memory:.0f} GiB, driver {driver})"


class Table:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, check: str, cases: int, passed: int, seconds: float, note: str = "") -> None:
        self.rows.append(
            {"check": check, "cases": cases, "passed": passed, "seconds": round(seconds, 2), "note": note}
        )
        status = "ok" if passed == cases else "FAIL"
        print(f"  {check:<34} {passed:>4}/{cases:<4} {status:<4} {seconds:7.1f} s  {note}", flush=True)

    def print(self) -> None:
        print("\n| check | agree | status | seconds | note |\n|---|---|---|---|---|")
        for row in self.rows:
            status = "ok" if row["passed"] == row["cases"] else "FAIL"
            print(f"| {row['check']} | {row['passed']}/{row['cases']} | {status} | {row['seconds']} | {row['note']} |")

    @property
    def failed(self) -> bool:
        return any(row["passed"] != row["cases"] for row in self.rows)


def agree(got: Any, expected: Any, *, normwise: bool) -> str | None:
    """None when `got` agrees with `expected` (module doc), else why not."""
    from _cpu_util import assert_close

    got, expected = np.asarray(got), np.asarray(expected)
    try:
        assert_close(expected, got, normwise=normwise)
    except AssertionError as err:
        return str(err).splitlines()[0][:160]
    return None


def check_ops(table: Table, arch: str) -> None:
    from xdsl.dialects import func

    import test_gpu_ptx as gpu_tests
    import test_lowering_nn_to_linalg as op_table
    from irgrad.backends.gpu import compile_module
    from irgrad.backends.interpreter import run_function

    cases = op_table.CASES
    start = time.perf_counter()
    module = gpu_tests._batch_module(cases)
    signatures = {
        f.sym_name.data: (list(f.function_type.inputs.data), list(f.function_type.outputs.data))
        for f in module.ops
        if isinstance(f, func.FuncOp)
    }
    reference = module.clone()
    compiled = compile_module(module, "case0", arch=arch)
    compile_seconds = time.perf_counter() - start
    device = compiled.device()
    passed, failures = 0, []
    with device:
        for k, case in enumerate(cases):
            _, values = gpu_tests._case_inputs(case)
            try:
                with np.errstate(all="ignore"):
                    expected = run_function(reference, f"case{k}", list(values))
                got = compiled.function(f"case{k}", *signatures[f"case{k}"]).run(*values, device=device)
                device.synchronize()
                problems = [agree(g, e, normwise=not case.exact) for g, e in zip(got, expected)]
                problem = next((p for p in problems if p), None)
            except Exception as err:  # one failing case must not hide the others
                problem = f"{type(err).__name__}: {err}"
            if problem is None:
                passed += 1
            else:
                failures.append(f"{case.name}: {problem}")
    for failure in failures[:20]:
        print(f"    {failure}")
    note = f"compile {compile_seconds:.1f} s, {len(compiled.ptx.kernels)} kernels"
    table.add("every nn op (op table cases)", len(cases), passed, time.perf_counter() - start, note)


def check_programs(table: Table, arch: str) -> None:
    import irgrad as ig
    import test_gpu_ptx as gpu_tests
    from irgrad.backends.gpu import compile_module, compile_program
    from irgrad.backends.interpreter import run_function
    from irgrad.diagnostics import parse_module
    from irgrad.context import make_context

    for name, (fn, args) in gpu_tests.PROGRAMS.items():
        start = time.perf_counter()
        try:
            compiled = compile_program(ig.trace(fn, *args), arch=arch)
            got = compiled(*ig.tree_leaves(list(args)))
            expected = ig.tree_leaves(fn(*args))
            problems = [agree(g, e, normwise=True) for g, e in zip(got, expected)]
            problem = next((p for p in problems if p), None)
        except Exception as err:
            problem = f"{type(err).__name__}: {err}"
            traceback.print_exc()
        table.add(f"program {name}", 1, int(problem is None), time.perf_counter() - start, problem or "")
    start = time.perf_counter()
    text = (ROOT / "examples" / "mlp.mlir").read_text()
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 8), (8,), (8, 2), (2,)]]
    try:
        compiled = compile_module(parse_module(make_context(), text), "mlp", arch=arch)
        (got,) = compiled(*inputs)
        (expected,) = run_function(parse_module(make_context(), text), "mlp", inputs)
        problem = agree(got, expected, normwise=True)
    except Exception as err:
        problem = f"{type(err).__name__}: {err}"
    table.add("examples/mlp.mlir", 1, int(problem is None), time.perf_counter() - start, problem or "")


def cublas_self_test(m: int = 512, n: int = 2048, k: int = 1024) -> str:
    """One float32 GEMM through irgrad's cuBLAS binding in each math mode, against float64."""
    import os

    import pycuda.autoprimaryctx  # noqa: F401
    import pycuda.driver as cuda

    from irgrad.backends.gpu.cublas import Cublas, find_cublas

    path = find_cublas()
    if path is None:
        return "cuBLAS self-test: no cuBLAS"
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.mem_alloc(m * n * 4)
    report = []
    for mode in ("default", "pedantic"):
        os.environ["IRGRAD_CUBLAS_MATH"] = mode
        blas = Cublas(path)
        blas.gemm(False, False, False, m, n, k, 1.0, int(da), k, int(db), n, 0.0, int(dc), n)
        cuda.Context.synchronize()
        c = cuda.from_device(dc, (m, n), np.float32)
        blas.close()
        report.append(f"{mode} {np.abs(c - exact).max() / np.abs(exact).max():.1e}")
    del os.environ["IRGRAD_CUBLAS_MATH"]
    numpy = np.abs(a @ b - exact).max() / np.abs(exact).max()
    return f"cuBLAS self-test {m}x{k}x{n} f32 vs f64: " + ", ".join(report) + f"; numpy {numpy:.1e}"


def explain_disagreement(
    step: Any, compiled: Any, params: Any, x: Any, labels: Any, got: Any, expected: Any, arch: str
) -> None:
    """Print, per output, the GPU's and the float32 eager run's distance to a float64 run
    (normwise), run the GPU program twice more (does it change from run to run?) and once with
    its GEMMs on the host instead of cuBLAS: which part disagrees."""
    import os

    import irgrad as ig
    from irgrad.backends.gpu import compile_program

    p64 = ig.tree_map(lambda v: np.asarray(v, np.float64), params)
    exact = ig.tree_leaves(step(p64, np.asarray(x, np.float64), labels))
    leaves = ig.tree_leaves([params, x, labels])
    again = [compiled(*leaves) for _ in range(2)]
    import warnings

    os.environ["IRGRAD_CUBLAS"] = "none"
    try:
        with warnings.catch_warnings():  # "GEMMs run on the host": asked for here
            warnings.filterwarnings("ignore", message=".*GEMMs run on the host")
            host_gemm = compile_program(ig.trace(step, params, x, labels), arch=arch)(*leaves)
    finally:
        del os.environ["IRGRAD_CUBLAS"]

    def dist(a: Any, b: Any) -> float:
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))

    print("    " + cublas_self_test())
    for k, (g, e, r) in enumerate(zip(got, expected, exact)):
        print(
            f"    output {k} {np.shape(g)}: gpu-f64 {dist(g, r):.2e}, eager-f64 {dist(e, r):.2e}, "
            f"reruns {max(dist(a[k], g) for a in again):.2e}, host GEMMs-f64 {dist(host_gemm[k], r):.2e}"
        )


def run_step(step: Any, params: Any, x: Any, labels: Any, arch: str) -> tuple[Any, Any, Any, str | None]:
    """(compiled step, GPU results, eager results, the first disagreement or None)."""
    import irgrad as ig
    from irgrad.backends.gpu import compile_program

    compiled = compile_program(ig.trace(step, params, x, labels), arch=arch)
    got = compiled(*ig.tree_leaves([params, x, labels]))
    expected = ig.tree_leaves(step(params, x, labels))
    problems = [agree(g, e, normwise=True) for g, e in zip(got, expected)]
    return compiled, got, expected, next((p for p in problems if p), None)


def check_workloads(table: Table, arch: str) -> None:
    import irgrad as ig
    import mlp
    from irgrad.backends.gpu import compile_program

    _, _, step = mlp.irgrad_fns(ig)
    for spec in (wl.W1, wl.W2):
        params, x, labels = wl.mlp_data(spec)
        # Float64 decides: a relu unit whose input lies within float32 rounding of 0 takes
        # the other side when the GEMMs add in another order (cuBLAS's, not numpy's), and
        # its whole row of the gradient changes: W2 has a million such inputs, and a few lie
        # that close. In float64 none does, so any disagreement there is a real one.
        start = time.perf_counter()
        params64 = ig.tree_map(lambda v: np.asarray(v, np.float64), params)
        x64 = np.asarray(x, np.float64)
        try:
            compiled, _, _, exact_problem = run_step(step, params64, x64, labels, arch)
            note = exact_problem or f"{len(compiled.ptx.kernels)} kernels"
        except Exception as err:
            exact_problem = note = f"{type(err).__name__}: {err}"
            traceback.print_exc()
        table.add(f"{spec.id} training step {spec.title}, float64", 1, int(exact_problem is None), time.perf_counter() - start, note)
        start = time.perf_counter()
        try:
            compiled, got, expected, problem = run_step(step, params, x, labels, arch)
            note = problem or f"{len(compiled.ptx.kernels)} kernels"
            if problem:
                explain_disagreement(step, compiled, params, x, labels, got, expected, arch)
                if exact_problem is None:  # the float64 run agrees: rounding at relu kinks
                    note = f"float32 differs from eager float32 at relu kinks ({problem.strip(': ')}); float64 agrees"
                    problem = None
        except Exception as err:
            problem = note = f"{type(err).__name__}: {err}"
            traceback.print_exc()
        table.add(f"{spec.id} training step {spec.title}, float32", 1, int(problem is None), time.perf_counter() - start, note)
    start = time.perf_counter()
    x = wl.w4_data()
    try:
        compiled = compile_program(ig.trace(lambda v: ig.tanh(v) * 0.5 + v * v, x), arch=arch)
        (got,) = compiled(x)
        x64 = x.astype(np.float64)
        expected = (np.tanh(x64) * 0.5 + x64 * x64).astype(np.float32)
        problem = agree(got, expected, normwise=True)
    except Exception as err:
        problem = f"{type(err).__name__}: {err}"
    table.add("W4 fused elementwise, 16M", 1, int(problem is None), time.perf_counter() - start, problem or "")


DISK_CACHE_CHILD = """
import json, sys
import numpy as np
import irgrad as ig
import irgrad.backends.gpu as gpu
import test_gpu_ptx as gpu_tests

fn, args = gpu_tests.PROGRAMS[sys.argv[1]]
if sys.argv[2] == "hit":  # this process must load the program, never compile it
    def compile_program(*_, **__):
        raise AssertionError("compiled, although the disk cache holds the program")
    gpu.compile_program = compile_program
got = ig.jit(fn, backend="gpu")(*args)
print(json.dumps([np.asarray(g, dtype=np.float64).tolist() for g in ig.tree_leaves(got)]))
"""


def check_disk_cache(table: Table, arch: str, name: str = "mlp_value_and_grad") -> None:
    """`ig.jit(backend="gpu")` in two fresh processes sharing a cache folder: the first
    compiles and stores the program, the second must load it (compiling would fail there),
    and both must agree with the eager call. (`ig.jit` compiles for DEFAULT_ARCH, whose PTX
    the driver also runs on newer GPUs, so `arch` is not used.)"""
    import os
    import subprocess
    import tempfile

    import irgrad as ig
    import test_gpu_ptx as gpu_tests

    start = time.perf_counter()
    fn, args = gpu_tests.PROGRAMS[name]
    expected = ig.tree_leaves(fn(*args))
    problem = None
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, IRGRAD_CACHE_DIR=folder)
        env["PYTHONPATH"] = os.pathsep.join([*TEST_PATHS, str(ROOT), env.get("PYTHONPATH", "")])
        for phase in ("miss", "hit"):
            done = subprocess.run(
                [sys.executable, "-c", DISK_CACHE_CHILD, name, phase], env=env, capture_output=True, text=True, timeout=300
            )
            if done.returncode != 0:
                problem = f"{phase}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
                break
            values = json.loads(done.stdout.splitlines()[-1])
            got = [np.asarray(v, dtype=np.asarray(e).dtype) for v, e in zip(values, expected)]
            found = next((p for p in (agree(g, e, normwise=True) for g, e in zip(got, expected)) if p), None)
            if found:
                problem = f"{phase}: {found}"
                break
        entries = len(list(Path(folder).glob("*.gpu.json")))
        if problem is None and entries != 1:
            problem = f"{entries} .gpu.json entries after two runs"
    table.add(f"ig.jit(backend='gpu') from the disk cache ({name})", 1, int(problem is None), time.perf_counter() - start, problem or "")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("ops", "programs", "cache", "workloads"))
    parser.add_argument(
        "--emulate",
        action="store_true",
        help="run on the emulated GPU instead (a dry run of this script without a GPU; "
        "programs and the disk cache by default: the workloads are too large for it)",
    )
    args = parser.parse_args(argv)
    from irgrad.backends.gpu import cuda_unavailable_reason

    if args.emulate:
        import os

        os.environ["IRGRAD_GPU_EMULATE"] = "1"
        arch, description = "sm_80", "the emulated GPU (irgrad/backends/gpu/emulator.py)"
    else:
        reason = cuda_unavailable_reason()
        if reason is not None:
            print(f"gpu_check: cannot run on the GPU: {reason}", file=sys.stderr)
            return 2
        arch, description = device_arch()
    print(f"GPU: {description}; compiling for {arch}", flush=True)
    table = Table()
    checks = {"ops": check_ops, "programs": check_programs, "cache": check_disk_cache, "workloads": check_workloads}
    default = ("programs", "cache") if args.emulate else tuple(checks)
    for name, check in checks.items():
        if name in ((args.only,) if args.only else default):
            check(table, arch)
    table.print()
    out = ROOT / "build" / "gpu_check.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"device": description, "rows": table.rows}, indent=1))
    return 1 if table.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Runtime checks on the CPU backend: generate-runtime-verification and failed `cf.assert`s.

An index out of range at run time (read from an input) used to make the compiled code read or
write outside its buffer, often killing the process with SIGSEGV. With the checks, a compiled
call raises `RuntimeCheckError` located at the op (irgrad-run prints it and exits 1), and the
function stays usable: the failure longjmps back to the guarded call on the calling thread.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from irgrad.backends.cpu import CompiledFunction, RuntimeCheckError, compile_module
from irgrad.diagnostics import parse_module, verify_module
from irgrad.context import make_context
from irgrad.driver.run import cpu_pipeline
from irgrad.registry import run_pipeline

BIN = Path(sys.executable).parent

EXTRACT = """\
func.func @main(%t: tensor<4xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<4xf32>
  func.return %v : f32
}
"""

SCATTER = """\
func.func @scatter(%idx: tensor<3xindex>, %x: tensor<5xf32>) -> tensor<5xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %x) -> (tensor<5xf32>) {
    %i = tensor.extract %idx[%k] : tensor<3xindex>
    %v = tensor.extract %acc[%i] : tensor<5xf32>
    %w = arith.addf %v, %one : f32
    %n = tensor.insert %w into %acc[%i] : tensor<5xf32>
    scf.yield %n : tensor<5xf32>
  }
  func.return %r : tensor<5xf32>
}
"""


def _tool(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else name


def _irgrad_run(tmp_path: Path, text: str, *arrays: np.ndarray, flags: tuple[str, ...] = ()):
    source = tmp_path / "prog.mlir"
    source.write_text(text)
    inputs: list[str] = []
    for k, array in enumerate(arrays):
        path = tmp_path / f"in{k}.npy"
        np.save(path, array)
        inputs += ["--input", str(path)]
    return subprocess.run(
        [_tool("irgrad-run"), "prog.mlir", "--backend", "cpu", *inputs, *flags],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def compile_checked(text: str, name: str, file: str = "prog.mlir") -> CompiledFunction:
    """`@name` of `text` through irgrad-run's CPU pipeline, runtime checks included."""
    module = parse_module(make_context(), text, file)
    verify_module(module)
    func = next(op for op in module.ops if op.sym_name.data == name)  # type: ignore[attr-defined]
    lowered = run_pipeline(module.clone(), cpu_pipeline(runtime_checks=True))
    compiled = compile_module(lowered)
    return compiled.function(
        name, list(func.function_type.inputs.data), list(func.function_type.outputs.data)
    )


@pytest.fixture(scope="module")
def extract() -> CompiledFunction:
    return compile_checked(EXTRACT, "main")


@pytest.fixture(scope="module")
def scatter() -> CompiledFunction:
    return compile_checked(SCATTER, "scatter")


# -- irgrad-run --------------------------------------------------------------------------------


@pytest.mark.parametrize("index", [4, 7, -1, 1 << 40])
def test_irgrad_run_reports_an_out_of_range_index_at_the_op(tmp_path, index):
    t = np.arange(4, dtype=np.float32)
    proc = _irgrad_run(tmp_path, EXTRACT, t, np.array(index))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[:3] == [
        "prog.mlir:2:3: error: 'memref.load' op out-of-bounds index for dimension 0 of size 4",
        "  %v = tensor.extract %t[%i] : tensor<4xf32>",
        "  ^",
    ]
    assert proc.stdout == ""


def test_irgrad_run_in_range_gives_the_results(tmp_path):
    t = np.arange(4, dtype=np.float32)
    for flags in ((), ("--no-runtime-checks",)):
        proc = _irgrad_run(tmp_path, EXTRACT, t, np.array(3), flags=flags)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "3.0"


def test_irgrad_run_checks_stores_in_loops(tmp_path):
    x = np.zeros(5, np.float32)
    ok = _irgrad_run(tmp_path, SCATTER, np.array([0, 4, 4]), x)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == "[1. 0. 0. 0. 2.]"
    bad = _irgrad_run(tmp_path, SCATTER, np.array([0, 5, 4]), x)
    assert bad.returncode == 1
    assert bad.stderr.startswith(
        "prog.mlir:8:5: error: 'memref.load' op out-of-bounds index for dimension 0 of size 5"
    )
    assert "Traceback" not in bad.stderr


def test_no_runtime_checks_leaves_the_pass_out():
    assert "generate-runtime-verification" in cpu_pipeline(True)
    assert "generate-runtime-verification" not in cpu_pipeline(False)
    steps = cpu_pipeline(True).split(",")
    assert steps.index("bufferize") < steps.index("generate-runtime-verification")
    assert steps.index("generate-runtime-verification") < steps.index(
        "convert-linalg-to-parallel-loops"
    )


# -- the API -----------------------------------------------------------------------------------


def test_a_failed_check_raises_and_the_function_stays_usable(extract):
    t = np.arange(4, dtype=np.float32)
    assert extract(t, 2) == (np.float32(2.0),)
    with pytest.raises(RuntimeCheckError) as info:
        extract(t, 9)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.message == "'memref.load' op out-of-bounds index for dimension 0 of size 4"
    assert err.location is not None
    assert (err.location.file, err.location.line, err.location.col) == ("prog.mlir", 2, 3)
    # Again, through both call paths, with good and bad inputs alternating.
    for k in range(20):
        assert extract(t, k % 4) == (np.float32(k % 4),)
        with pytest.raises(RuntimeCheckError):
            extract(t, -1 - k)
        with pytest.raises(RuntimeCheckError):
            extract._general_call(t, 4 + k)
        assert extract._general_call(t, 1) == (np.float32(1.0),)


def test_scatter_out_of_range_raises_and_recovers(scatter):
    x = np.zeros(5, np.float32)
    with pytest.raises(RuntimeCheckError, match="out-of-bounds index for dimension 0 of size 5"):
        scatter(np.array([1, 2, 5]), x)
    (out,) = scatter(np.array([1, 2, 2]), x)
    np.testing.assert_array_equal(out, [0, 1, 2, 0, 0])
    np.testing.assert_array_equal(x, np.zeros(5))


def test_memory_errors_are_still_memory_errors(extract):
    # The guard's other failure: a size is positive, a failed check is ASSERT_FAILED.
    error = extract._call_error(1 << 50)
    assert isinstance(error, MemoryError) and not isinstance(error, RuntimeCheckError)


def test_checks_from_several_threads(extract, scatter):
    t = np.arange(4, dtype=np.float32)
    x = np.zeros(5, np.float32)

    def work(k: int) -> str:
        for n in range(50):
            if (k + n) % 3 == 0:
                try:
                    extract(t, 4 + n)
                except RuntimeCheckError as err:
                    assert "dimension 0 of size 4" in err.message
                else:
                    return "no error"
            elif (k + n) % 3 == 1:
                try:
                    scatter(np.array([0, 0, 5 + n]), x)
                except RuntimeCheckError as err:
                    assert "dimension 0 of size 5" in err.message
                else:
                    return "no error"
            else:
                if extract(t, n % 4) != (np.float32(n % 4),):
                    return "wrong result"
                (out,) = scatter(np.array([n % 5, 1, 1]), x)
                expected = np.zeros(5, np.float32)
                np.add.at(expected, [n % 5, 1, 1], 1)
                if not np.array_equal(out, expected):
                    return "wrong scatter"
        return "ok"

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(work, range(8))) == ["ok"] * 8


# -- what the pass leaves out, and the runtime outside a guarded call --------------------------


LARGE_PARALLEL = """\
func.func @gather(%x: memref<1024x1024xf32>, %idx: memref<1024xindex>, %out: memref<1024x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  "scf.parallel"(%c0, %c0, %n, %n, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %r = memref.load %idx[%i] : memref<1024xindex>
    %v = memref.load %x[%r, %j] : memref<1024x1024xf32>
    memref.store %v, %out[%i, %j] : memref<1024x1024xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
"""


def test_loops_with_checks_stay_on_the_calling_thread():
    """A failed check can only longjmp on the thread that made the call: a parallel loop
    holding one is not given to the thread pool (it would abort in a worker)."""
    checked = parse_module(make_context(), LARGE_PARALLEL, "gather.mlir")
    plain = checked.clone()
    run_pipeline(checked, "generate-runtime-verification,convert-to-llvm")
    run_pipeline(plain, "convert-to-llvm")
    assert "irgrad_parallel_for" in str(plain)
    assert "irgrad_parallel_for" not in str(checked)
    assert "irgrad_assert_failed" in str(checked)


def test_outside_a_guarded_call_a_failed_check_aborts_with_the_message(tmp_path):
    child = textwrap.dedent(
        f"""
        import ctypes, sys, numpy as np
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
        from test_runtime_verification import EXTRACT, compile_checked
        f = compile_checked(EXTRACT, "main")
        t = np.arange(4, dtype=np.float32)
        index = np.array(9, dtype=np.int64)
        result = np.zeros((), np.float32)
        slots = (ctypes.c_void_p * 3)(t.ctypes.data, index.ctypes.data, result.ctypes.data)
        words = (ctypes.c_void_p * 1)(t.ctypes.data)
        slots[0] = ctypes.addressof(words)
        f._entry(slots)  # no guard: the runtime prints the message and aborts
        print("not reached")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", child], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode != 0
    assert "not reached" not in proc.stdout
    assert (
        "prog.mlir:2:3: 'memref.load' op out-of-bounds index for dimension 0 of size 4"
        in proc.stderr
    )

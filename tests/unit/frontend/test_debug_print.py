"""`ig.debug.print` (jax.debug.print): the same text from eager calls, the interpreter, compiled
CPU code and the GPU emulator; once per evaluation under grad/jvp, the batch under vmap, every
iteration of a loop; never a derivative; located errors for bad formats; object code that
prints is disk-cached and prints the same in a new process."""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig

X = np.array([0.5, -1.25, 2.0])


def model(x):
    y = ig.sin(x)
    ig.debug.print("y = {} total {t:.4f}", y, t=ig.sum(y))
    return ig.sum(y * y)


def expected_line(x):
    y = np.sin(x)
    return f"y = {y} total {y.sum():.4f}"


def _lines(capsys) -> list[str]:
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("backend", ["eager", "interp", "cpu", "gpu"])
def test_prints_the_same_text_on_every_backend(backend, capsys, monkeypatch):
    if backend == "gpu":
        monkeypatch.setenv("IRGRAD_GPU_EMULATE", "1")
    fn = model if backend == "eager" else ig.jit(model, backend=backend)
    value = fn(X)
    np.testing.assert_allclose(value, np.sum(np.sin(X) ** 2), rtol=1e-14)
    assert _lines(capsys) == [expected_line(X)]


def test_transforms_print_the_forward_values_once(capsys):
    g = ig.jit(ig.grad(model))(X)
    np.testing.assert_allclose(g, 2 * np.sin(X) * np.cos(X), rtol=1e-14)
    assert _lines(capsys) == [expected_line(X)]
    ig.jvp(model, (X,), (np.ones(3),))
    assert _lines(capsys) == [expected_line(X)]
    batch = np.stack([X, 2 * X])
    ig.jit(ig.vmap(lambda x: (ig.debug.print("batch {}", ig.sin(x)), ig.sum(x))[1]))(batch)
    assert _lines(capsys) == f"batch {np.sin(batch)}".splitlines()  # the whole batch, once


def test_prints_every_iteration_of_a_loop(capsys):
    def body(i, c):
        ig.debug.print("step {i}: {c}", i=i, c=c)
        return c * 2.0

    out = ig.jit(lambda x: ig.fori_loop(0, 3, body, x))(X)
    np.testing.assert_allclose(out, 8 * X)
    assert _lines(capsys) == [f"step {i}: {X * 2**i}" for i in range(3)]


def test_a_value_printed_and_then_overwritten_in_place_prints_its_old_value(capsys):
    """bufferize must not let a later in-place write reach the buffer before the print."""

    def f(x):
        y = x + 1.0
        ig.debug.print("{}", y)
        return y * y  # may be computed in y's buffer, after the print

    np.testing.assert_allclose(ig.jit(f)(X), (X + 1) ** 2)
    assert _lines(capsys) == [str(X + 1)]


CACHED_PRINT_SCRIPT = """
import numpy as np
import irgrad as ig

def f(x, n, flags):
    y = ig.sin(x)
    ig.debug.print("y = {} total {t:.4f}", y, t=ig.sum(y))
    ig.debug.print("n {} flags {} half {}", n * 2, flags, x.astype(ig.bfloat16))
    return ig.sum(y * y)

x = np.array([0.5, -1.25, 2.0])
args = (x, np.array([3, -4], dtype=np.int32), np.array([True, False]))
jitted = ig.jit(f, backend="cpu")
value = jitted(*args)
print("stats", sorted(jitted._compile(jitted.signature(*args), args).stats()))
print("value", repr(float(value)))
"""


def test_object_code_that_prints_is_cached_on_disk_and_prints_in_a_new_process(tmp_path):
    """A print's format, names, shapes and dtypes are a constant string in the object code,
    so a process that loads the object from disk prints exactly what the compiling one did."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, IRGRAD_CACHE_DIR=str(tmp_path))

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", CACHED_PRINT_SCRIPT], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    first = run()
    assert len(list(tmp_path.glob("*.o"))) == 1
    second = run()
    assert [line for line in first if not line.startswith("stats")] == [
        line for line in second if not line.startswith("stats")
    ]
    assert "stats ['load']" not in first and "stats ['load']" in second  # compiled, then loaded
    x = np.array([0.5, -1.25, 2.0])
    assert second[0] == expected_line(x)
    half = np.asarray(x, dtype=ig.bfloat16)
    assert second[1] == f"n {np.array([6, -8], dtype=np.int32)} flags {np.array([True, False])} half {half}"
    assert second[2] == "stats ['load']"
    np.testing.assert_allclose(float(second[3].split()[1]), np.sum(np.sin(x) ** 2), rtol=1e-14)


def test_bad_formats_are_errors_at_the_call_site():
    with pytest.raises(ValueError, match=r"debug.print: '\{\} \{\}' has 2 positional fields but 1 positional") as err:
        ig.trace(lambda x: ig.debug.print("{} {}", x) or x, X)
    assert "test_debug_print.py" in str(err.value)
    with pytest.raises(ValueError, match="uses w, which no keyword argument gives"):
        ig.trace(lambda x: ig.debug.print("{w}", x=x) or x, X)
    with pytest.raises(ValueError, match="at most 8 values"):
        ig.trace(lambda x: ig.debug.print("", *[x] * 9) or x, X)
    with pytest.raises(TypeError, match="argument 0 must be an array or a scalar, got dict"):
        ig.trace(lambda x: ig.debug.print("{}", {"x": x}) or x, X)


def test_a_format_that_does_not_fit_the_value_reports_instead_of_raising(capfd):
    """`{:.3f}` of an array: every backend writes the failure to stderr and goes on."""
    out = ig.jit(lambda x: (ig.debug.print("{:.3f}", x), x * 2)[1])(X)
    np.testing.assert_allclose(out, 2 * X)
    err = capfd.readouterr().err
    assert "irgrad: debug.print '{:.3f}' failed: TypeError" in err

"""`ig.jit`: one trace per input signature (shapes, dtypes, pytree structure, static values),
static_argnums, transparency inside a trace, and backends that are not there yet.
"""

from __future__ import annotations

import numpy as np
import pytest

import irgrad as ig
from _frontend_util import assert_array, randn

X = randn(3, seed=1)
Y = randn(3, seed=2)


def _counting(fn):
    """`fn` and a list that grows by one each time Python runs it (each trace)."""
    calls: list[int] = []

    def wrapped(*args):
        calls.append(1)
        return fn(*args)

    wrapped.__name__ = fn.__name__
    return wrapped, calls


def test_jit_caches_per_signature():
    def f(x, y):
        return ig.sin(x) * y

    fn, calls = _counting(f)
    jitted = ig.jit(fn, backend="interp")
    assert_array(jitted(X, Y), np.sin(X) * Y, rtol=1e-6)
    assert len(calls) == 1
    x2, y2 = randn(3, seed=3), randn(3, seed=4)
    assert_array(jitted(x2, y2), np.sin(x2) * y2, rtol=1e-6)  # same shapes: no retrace
    assert len(calls) == 1
    assert_array(jitted(randn(2, 3, seed=5), Y), np.sin(randn(2, 3, seed=5)) * Y, rtol=1e-6)  # new shape
    assert len(calls) == 2
    jitted(X.astype(np.float64), Y)  # new dtype
    assert len(calls) == 3
    jitted(X, Y)
    jitted(randn(2, 3, seed=6), Y)
    assert len(calls) == 3


def test_jit_pytree_structure_is_part_of_the_signature():
    def f(p):
        return ig.tree_map(lambda v: v * 2.0, p)

    fn, calls = _counting(f)
    jitted = ig.jit(fn)
    out = jitted({"a": X, "b": (Y,)})
    assert_array(out["a"], X * 2)
    assert_array(out["b"][0], Y * 2)
    jitted({"a": Y, "b": (X,)})
    assert len(calls) == 1
    jitted({"a": X, "b": [Y]})  # a list, not a tuple
    jitted({"a": X, "c": (Y,)})  # another key
    assert len(calls) == 3


def test_jit_python_scalars_are_traced_by_type():
    fn, calls = _counting(lambda x, s: x * s)
    jitted = ig.jit(fn)
    assert_array(jitted(X, 2.0), X * 2)
    assert_array(jitted(X, 3.0), X * 3)
    assert len(calls) == 1


def test_jit_static_argnums():
    def f(x, n, mode):
        y = x
        for _ in range(n):  # a Python loop over a static int
            y = y * 2.0
        return -y if mode == "neg" else y

    fn, calls = _counting(f)
    jitted = ig.jit(fn, static_argnums=(1, 2))
    assert_array(jitted(X, 3, "neg"), -X * 8)
    assert_array(jitted(Y, 3, "neg"), -Y * 8)
    assert len(calls) == 1
    assert_array(jitted(X, 2, "neg"), -X * 4)  # a new static value retraces
    assert_array(jitted(X, 2, "pos"), X * 4)
    assert len(calls) == 3


def test_jit_static_argnums_int_and_decorator_forms():
    @ig.jit(static_argnums=1)
    def power(x, k):
        return x ** k

    assert_array(power(X, 3), X ** 3, rtol=1e-6)
    assert_array(power(X, 2), X ** 2, rtol=1e-6)

    @ig.jit
    def double(x):
        return x * 2

    assert_array(double(X), X * 2)
    assert double.__name__ == "double"


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_jit_keyword_arguments_and_static_argnames(backend):
    """As jax.jit: keywords bind to their parameters (positional ones to their positions, so
    static_argnums/static_argnames see one form of the call), keyword-only ones too; a static
    name compiles once per value."""
    x = randn(2, 3, dtype=np.float64, seed=7)

    def f(x, scale=2.0, train=False, *, bias=1.0, mode="a"):
        y = x * scale + bias
        return (y * 2 if train else y) + (0.0 if mode == "a" else 10.0)

    jf = ig.jit(f, backend=backend, static_argnames=("train", "mode"))
    calls = [
        ((x,), {}),
        ((x, 3.0), {}),
        ((x,), {"scale": 3.0}),
        ((x,), {"train": True}),
        ((x, 1.5, True), {}),
        ((x,), {"bias": np.ones(3)}),
        ((x,), {"mode": "b", "bias": np.full(3, 0.5), "scale": 0.5}),
    ]
    for args, kwargs in calls:
        np.testing.assert_allclose(jf(*args, **kwargs), f(*args, **kwargs), rtol=1e-6, err_msg=str(kwargs))
    assert jf.static_argnums == (2,) and jf.static_kwnames == {"mode"}
    before = len(jf._programs)
    jf(x, train=True)  # the same signature as jf(x, 2.0, True): no new program
    jf(x, 2.0, True)
    assert len(jf._programs) == before
    g = ig.grad(lambda v: ig.sum(jf(v, scale=3.0, mode="b")))(x)
    np.testing.assert_allclose(g, np.full_like(x, 3.0))
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        jf(x, bogus=1)
    with pytest.raises(TypeError, match="static argument 'mode' of f must be hashable"):
        jf(x, mode=[1])
    with pytest.raises(ValueError, match="static_argnames names 'nope', which is not a parameter of f"):
        ig.jit(f, static_argnames="nope")


def test_jit_trace_gives_the_program():
    jitted = ig.jit(lambda x: ig.exp(x))
    program = jitted.trace(X)
    assert isinstance(program, ig.Program)
    assert "nn.exp" in str(program)
    assert jitted.trace(Y) is program


def test_jit_lower_holds_every_stage():
    lowered = ig.jit(lambda x: ig.exp(x) * 2.0, backend="cpu").lower(X)
    assert "nn.exp" in lowered.as_text("nn")
    assert "linalg.generic" in lowered.as_text("linalg")
    assert "memref" in lowered.as_text("bufferized")
    assert "scf.parallel" in lowered.as_text("loops") or "scf.for" in lowered.as_text("loops")
    assert "llvm.func" in lowered.as_text("llvm")
    assert "define" in lowered.as_text("llvm-ir")
    compiled = lowered.compile()
    assert_array(compiled(X), np.exp(X) * 2, rtol=1e-6)
    assert {"trace", "autodiff", "linalg", "bufferized", "loops", "llvm", "optimize", "codegen"} <= set(
        compiled.stats()
    )
    with pytest.raises(TypeError, match="argument x has shape"):
        compiled(np.ones((7,), np.float32))


def test_lowered_without_stages_compiles_once_in_place():
    """What a plain call uses: no copy per stage; the one module is compiled, once."""
    from irgrad.frontend.stages import Lowered

    jitted = ig.jit(lambda x: ig.exp(x) * 2.0, backend="cpu")
    lowered = Lowered(jitted.trace(X), keep_stages=False)
    assert lowered.modules == {}
    with pytest.raises(ValueError, match="stage 'loops' was not kept"):
        lowered.as_text("loops")
    with pytest.raises(ValueError, match="unknown stage 'lops'"):
        lowered.as_text("lops")
    compiled = lowered.compile()
    assert_array(compiled(X), np.exp(X) * 2, rtol=1e-6)
    assert "define" in lowered.as_text("llvm-ir")
    with pytest.raises(ValueError, match="compiled already"):
        lowered.compile()


def test_jit_is_transparent_inside_a_trace():
    fn, calls = _counting(lambda x: ig.tanh(x) + 1.0)
    jitted = ig.jit(fn)

    def outer(x):
        return jitted(x) * jitted(x * 2.0)

    got = ig.trace(outer, X)(X)
    assert_array(got, (np.tanh(X) + 1) * (np.tanh(2 * X) + 1), rtol=1e-6)
    assert len(calls) == 2  # inlined at each call


def test_jit_of_grad():
    g = ig.jit(ig.grad(lambda x: ig.sum(ig.sin(x))))
    assert_array(g(X), np.cos(X), rtol=1e-6)
    assert_array(g(Y), np.cos(Y), rtol=1e-6)


def test_jit_gpu_without_a_gpu_says_so(monkeypatch):
    monkeypatch.delenv("IRGRAD_GPU_EMULATE", raising=False)
    try:
        import pycuda.driver  # noqa: F401

        pytest.skip("pycuda is installed: this test is for machines without CUDA")
    except ImportError:
        pass
    jitted = ig.jit(lambda x: x + 1.0, backend="gpu")
    with pytest.raises(Exception, match="cannot run on the GPU: pycuda is not installed"):
        jitted(X)


def test_jit_gpu_on_the_emulator(monkeypatch):
    monkeypatch.setenv("IRGRAD_GPU_EMULATE", "1")
    jitted = ig.jit(lambda x, y: ig.tanh(x) * y + 1.0, backend="gpu")
    assert_array(jitted(X, Y), np.tanh(X) * Y + 1.0, rtol=1e-5)


def test_jit_unknown_backend():
    with pytest.raises(ValueError, match="unknown backend 'tpu'"):
        ig.jit(lambda x: x, backend="tpu")


def test_jit_explains_cache_misses(monkeypatch, capsys):
    monkeypatch.setenv("IRGRAD_EXPLAIN_CACHE_MISSES", "1")
    jitted = ig.jit(lambda x: x * 3.0)
    jitted(X)
    jitted(X)
    err = capsys.readouterr().err
    assert err.count("compiling") == 1 and "first call" in err


def test_jit_explains_why_it_recompiles(monkeypatch, capsys):
    monkeypatch.setenv("IRGRAD_EXPLAIN_CACHE_MISSES", "1")
    jitted = ig.jit(lambda x, n: x * n, static_argnums=1)
    jitted(X, 2)
    jitted(X.astype(np.float64), 2)
    jitted(np.ones((5,), np.float64), 2)
    jitted(np.ones((5,), np.float64), 3)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 4
    assert "first call" in err[0]
    assert "argument x: new dtype float64 (was float32)" in err[1]
    assert "argument x: new shape (5,) (was (3,))" in err[2]
    assert "static argument #1: new value 3 (was 2)" in err[3]


def test_jit_explains_a_new_structure_naming_the_leaf(monkeypatch, capsys):
    monkeypatch.setenv("IRGRAD_EXPLAIN_CACHE_MISSES", "1")
    jitted = ig.jit(lambda params, x: params["w"] * x + params["b"][0])
    jitted({"w": X, "b": [X]}, X)
    jitted({"w": X, "b": (X,)}, X)
    jitted({"w": X, "b": (X.astype(np.float64),)}, X)
    err = capsys.readouterr().err.splitlines()
    assert "new argument structure: params_b: got a tuple of 1, was a list of 1" in err[1]
    assert "argument params_b_0: new dtype float64 (was float32)" in err[2]


def test_cpu_jit_matches_the_interpreter_and_caches_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path))

    def step(w, x):
        return ig.tanh(x @ w).sum(), ig.grad(lambda v: ig.mean(ig.tanh(x @ v) ** 2))(w)

    w, x = randn(4, 3, seed=3), randn(5, 4, seed=4)
    cpu = ig.jit(step, backend="cpu")
    got = cpu(w, x)
    want = ig.jit(step)(w, x)
    for g, e in zip(got, want):
        assert_array(g, e, rtol=1e-5)
    assert len(list(tmp_path.glob("*.o"))) == 1
    # A fresh jit (as in a new process) loads the object from disk and gives the same results.
    again = ig.jit(step, backend="cpu")
    compiled = again._compile(again.signature(w, x), (w, x))
    assert set(compiled.stats()) == {"load"}
    for g, e in zip(again(w, x), want):
        assert_array(g, e, rtol=1e-5)
    # A corrupt entry is a miss, recompiled and overwritten, never a crash.
    entry = next(tmp_path.glob("*.o"))
    entry.write_bytes(b"\x7fELF garbage")
    third = ig.jit(step, backend="cpu")
    for g, e in zip(third(w, x), want):
        assert_array(g, e, rtol=1e-5)


def test_cpu_jit_checks_arguments_before_running():
    compiled = ig.jit(lambda params, x: params["w"] @ x, backend="cpu")
    params = {"w": randn(2, 3, seed=5)}
    x = randn(3, seed=6)
    assert_array(compiled(params, x), params["w"] @ x, rtol=1e-5)
    lowered = ig.jit(lambda params, x: params["w"] @ x, backend="cpu").lower(params, x).compile()
    with pytest.raises(TypeError, match="argument params_w has shape"):
        lowered({"w": randn(3, 3, seed=5)}, x)
    with pytest.raises(TypeError, match=r"takes 2 argument\(s\), got 3"):
        lowered(params, x, x)
    with pytest.raises(TypeError, match=r"argument #0: got a dict with keys \['v'\], expected a dict with keys \['w'\]"):
        lowered({"v": params["w"]}, x)
    # Non-contiguous and big-endian inputs are copied, giving the right answer.
    wide = randn(2, 6, seed=7)[:, ::2]
    assert_array(compiled({"w": wide}, x), wide @ x, rtol=1e-5)
    assert_array(compiled(params, x.astype(">f4")), params["w"] @ x, rtol=1e-5)


def test_cpu_jit_call_fast_path_keeps_the_signature_rules(monkeypatch):
    # Repeated calls take the cached fast path; each rule of the signature still holds there.
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    fn, calls = _counting(lambda p, s: p["a"] * s + p["b"][0])
    jitted = ig.jit(fn, backend="cpu")
    p = {"a": X, "b": (Y,)}
    for _ in range(3):
        assert_array(jitted(p, 2.0), X * 2 + Y, rtol=1e-6)
    assert len(calls) == 1
    assert_array(jitted(p, 3.0), X * 3 + Y, rtol=1e-6)  # a Python scalar is traced by type
    assert len(calls) == 1
    # The same signature by other routes: big-endian and non-contiguous arrays are copied.
    assert_array(jitted({"a": X.astype(">f4"), "b": (Y,)}, 2.0), X * 2 + Y, rtol=1e-6)
    wide = randn(6, seed=9)
    assert_array(jitted({"a": wide[::2], "b": (Y,)}, 2.0), wide[::2] * 2 + Y, rtol=1e-6)
    assert len(calls) == 1
    jitted({"a": X, "b": [Y]}, 2.0)  # a list, not a tuple
    jitted({"a": X.astype(np.float64), "b": (Y,)}, 2.0)  # a new dtype
    jitted({"a": randn(2, 3, seed=5), "b": (Y,)}, 2.0)  # a new shape
    assert len(calls) == 4
    jitted(p, 2.0)
    assert len(calls) == 4
    # Inside a trace the jitted function is inlined, fast path or not.
    assert_array(ig.trace(lambda q: jitted(q, 2.0), p)(p), X * 2 + Y, rtol=1e-6)
    assert len(calls) == 5


def test_cpu_jit_fast_path_static_arguments():
    fn, calls = _counting(lambda x, n: x * float(n))
    jitted = ig.jit(fn, backend="cpu", static_argnums=1)
    assert_array(jitted(X, 2), X * 2)
    assert_array(jitted(X, 2), X * 2)
    assert_array(jitted(X, 3), X * 3)
    assert len(calls) == 2
    with pytest.raises(TypeError):
        jitted(X, [2])  # an unhashable static value is an error, as before


def test_numpy_scalars_keep_their_dtype_python_scalars_take_the_default():
    """np.float64 subclasses float, but is a typed scalar (as a 0-d array), not a weak Python one."""
    f = ig.jit(lambda x: x * 2)
    assert f(np.float64(3.0)).dtype == np.float64 and float(f(np.float64(3.0))) == 6.0
    assert f(np.float32(3.0)).dtype == np.float32
    assert f(3.0).dtype == np.float32
    assert ig.ShapeDtype.of(np.float64(1.0)) == ig.ShapeDtype((), np.float64)
    assert ig.grad(lambda x: x * x)(np.float64(3.0)).dtype == np.float64


def test_jit_widens_narrow_integers_as_the_trace_does_and_names_bad_arguments():
    """A uint8/int16 array traces as int32 (exact): the compiled call widens it the same way
    instead of refusing its own signature; an unsupported dtype names the argument."""
    for dtype in (np.uint8, np.int16):
        out = ig.jit(lambda a: a * 2)(np.arange(3, dtype=dtype))
        np.testing.assert_array_equal(out, [0, 2, 4])
        assert out.dtype == np.int32

    def f(params, x):
        return x * 2

    with pytest.raises(ig.DTypeError, match=r"jit: argument x of f: numpy arrays of dtype uint32 are not supported") as err:
        ig.jit(f)({"w": np.ones(2)}, np.ones(3, np.uint32))
    assert "test_frontend_jit.py" in str(err.value)
    with pytest.raises(ig.DTypeError, match=r"jit: argument params_w of f: numpy arrays of dtype <U5"):
        ig.jit(f)({"w": "hello"}, np.ones(3))


def test_negative_static_argnums_count_from_the_last_positional_parameter():
    f = ig.jit(lambda x, n: x * n, static_argnums=-1, backend="interp")
    assert f.static_argnums == (1,)
    assert_array(f(np.ones(2), 3), np.full(2, 3.0), np.float64)
    assert "%n" not in f.lower(np.ones(2), 3).as_text()  # baked in, not an argument
    with pytest.raises(ValueError, match="static_argnums -3 is out of range"):
        ig.jit(lambda x, n: x, static_argnums=-3)
    with pytest.raises(ValueError, match="without \\*args"):
        ig.jit(lambda *xs: xs[0], static_argnums=-1)


def test_jit_of_something_not_callable_is_a_type_error_at_once():
    with pytest.raises(TypeError, match="jit: expected a function, got int 5"):
        ig.jit(5)


def test_item_and_tolist_of_a_traced_value_are_concretization_errors():
    with pytest.raises(ig.ConcretizationError, match=r"item\(\) needs a concrete value"):
        ig.jit(lambda x: x.item(), backend="interp")(np.ones(()))
    with pytest.raises(ig.ConcretizationError, match=r"tolist\(\)"):
        ig.jit(lambda x: x.tolist(), backend="interp")(np.ones(2))


"""`ig.linalg` factorizations and solves (cholesky, solve_triangular, cho_factor/cho_solve,
lu_factor/lu/lu_solve, solve, inv, det, slogdet, matrix_power, qr; eigh, eigvalsh, svd, svdvals,
pinv, lstsq, matrix_rank, cond, the 2-norms) against numpy.linalg and
scipy.linalg: float64 on well-conditioned random matrices of sizes 1, 2, 5, 17 and a (3, 4)
batch, float32, eagerly, on the interpreter and compiled; derivatives at first and second order
against finite differences and closed forms; the gradient's IR holds no tape of the loops;
singular and non-positive-definite inputs; vmap; error messages.

Compiles are few and shared (each costs seconds on CPU): most checks run on the interpreter.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.linalg as sl  # the oracle for the factorizations (a test dependency)

import irgrad as ig
from irgrad.tracing import reference_loops


SHAPES = [(1, 1), (2, 2), (5, 5), (17, 17), (3, 4, 5, 5)]


def general(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A Gaussian matrix (pivoting happens), redrawn until every one in the batch has cond < 1e3."""
    while True:
        a = rng.standard_normal(shape)
        if np.all(np.linalg.cond(a) < 1e3):
            return a


def spd(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    m = rng.standard_normal(shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def inputs(seed: int, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = shape[-1]
    s = spd(rng, shape)
    low = np.linalg.cholesky(s)
    garbage = 100 * rng.standard_normal(shape)  # in the triangle a triangular solve must not read
    return {
        "a": general(rng, shape),
        "s": s,
        "lower": low + np.triu(garbage, 1),
        "upper": np.swapaxes(low, -1, -2) + np.tril(garbage, -1),
        "unit": low / np.diagonal(low, axis1=-2, axis2=-1)[..., None, :] + np.triu(garbage),
        "s_lower": np.tril(s) + np.triu(garbage, 1),  # only the lower triangle is read
        "s_upper": np.triu(s) + np.tril(garbage, -1),
        "b": rng.standard_normal((*shape[:-1], 3)),
        "b2": rng.standard_normal((n, 2)),
        "v": rng.standard_normal(n),
        "tall": rng.standard_normal((*shape[:-2], n + 2, n)),
        "wide": rng.standard_normal((*shape[:-2], n, n + 3)),
    }


def compute(x: dict) -> dict:
    """Every function on one set of inputs (traced or eager alike)."""
    L = ig.linalg
    lu, piv = L.lu_factor(x["a"])
    p, lo, up = L.lu(x["a"])
    sign, logdet = L.slogdet(x["a"])
    return {
        "cholesky": L.cholesky(x["s"]),
        "cholesky_upper": L.cholesky(x["s"], upper=True),
        "cholesky_lower_triangle": L.cholesky(x["s_lower"], symmetrize_input=False),
        "tri_lower": L.solve_triangular(x["lower"], x["b"], lower=True),
        "tri_upper_T": L.solve_triangular(x["upper"], x["b"], trans="T"),
        "tri_lower_T_vec": L.solve_triangular(x["lower"], x["b"][..., 0], trans=1, lower=True),
        "tri_unit": L.solve_triangular(x["unit"], x["b"], lower=True, unit_diagonal=True),
        "cho_solve_lower": L.cho_solve(L.cho_factor(x["s_lower"], lower=True), x["b"]),
        "cho_solve_upper": L.cho_solve(L.cho_factor(x["s_upper"]), x["b"]),
        "cho_factor_upper": L.cho_factor(x["s_upper"])[0],
        "lu": lu,
        "piv": piv,
        "plu": (p, lo, up),
        "lu_solve": L.lu_solve((lu, piv), x["b"]),
        "lu_solve_T": L.lu_solve((lu, piv), x["b"], trans=1),
        "solve": L.solve(x["a"], x["b"]),
        "solve_vec": L.solve(x["a"], x["v"]),
        "solve_broadcast": L.solve(x["a"], x["b2"]),
        "inv": L.inv(x["a"]),
        "det": L.det(x["a"]),
        "slogdet": (sign, logdet),
        "power": (L.matrix_power(x["a"], 0), L.matrix_power(x["a"], 3), L.matrix_power(x["a"], -2)),
        "qr": L.qr(x["a"]),
        "qr_tall": L.qr(x["tall"]),
        "qr_wide": L.qr(x["wide"]),
        "qr_r": L.qr(x["tall"], mode="r"),
    }


def _per_matrix(fn, a: np.ndarray):
    """scipy's unbatched factorizations over a batch."""
    flat = a.reshape(-1, *a.shape[-2:])
    outs = [fn(m) for m in flat]
    return [np.stack(parts).reshape(*a.shape[:-2], *parts[0].shape) for parts in zip(*outs)]


def reference(x: dict) -> dict:
    sw = lambda m: np.swapaxes(m, -1, -2)  # noqa: E731
    a, s, b = x["a"], x["s"], x["b"]
    eye = np.eye(a.shape[-1])
    lu, piv = _per_matrix(sl.lu_factor, a)
    sign, logdet = np.linalg.slogdet(a)
    mp = np.linalg.matrix_power
    return {
        "cholesky": np.linalg.cholesky(s),
        "cholesky_upper": sw(np.linalg.cholesky(s)),
        "cholesky_lower_triangle": np.linalg.cholesky(s),
        "tri_lower": np.linalg.solve(np.tril(x["lower"]), b),
        "tri_upper_T": np.linalg.solve(sw(np.triu(x["upper"])), b),
        "tri_lower_T_vec": np.linalg.solve(sw(np.tril(x["lower"])), b[..., :1])[..., 0],
        "tri_unit": np.linalg.solve(np.tril(x["unit"], -1) + eye, b),
        "cho_solve_lower": np.linalg.solve(s, b),
        "cho_solve_upper": np.linalg.solve(s, b),
        "cho_factor_upper": sw(np.linalg.cholesky(s)),
        "lu": lu,
        "piv": piv,
        "plu": tuple(_per_matrix(sl.lu, a)),
        "lu_solve": np.linalg.solve(a, b),
        "lu_solve_T": np.linalg.solve(sw(a), b),
        "solve": np.linalg.solve(a, b),
        "solve_vec": np.linalg.solve(a, np.broadcast_to(x["v"], a.shape[:-1])[..., None])[..., 0],
        "solve_broadcast": np.linalg.solve(a, x["b2"]),
        "inv": np.linalg.inv(a),
        "det": np.linalg.det(a),
        "slogdet": (sign, logdet),
        "power": (np.broadcast_to(eye, a.shape), mp(a, 3), mp(a, -2)),
        "qr": tuple(np.linalg.qr(a)),  # Householder with LAPACK's signs: the same q and r
        "qr_tall": tuple(np.linalg.qr(x["tall"])),
        "qr_wide": tuple(np.linalg.qr(x["wide"])),
        "qr_r": np.linalg.qr(x["tall"], mode="r"),
    }


def assert_close(got: dict, want: dict, rtol: float, where: str) -> None:
    for key in want:
        g_leaves, w_leaves = ig.tree_leaves(got[key]), ig.tree_leaves(want[key])
        assert len(g_leaves) == len(w_leaves), key
        for g, w in zip(g_leaves, w_leaves):
            g, w = np.asarray(g), np.asarray(w)
            assert g.shape == w.shape, f"{where} {key}: shape {g.shape} vs {w.shape}"
            if w.dtype.kind in "iu":
                np.testing.assert_array_equal(g, w, err_msg=f"{where} {key}")
                continue
            scale = max(np.abs(w).max(initial=0.0), 1.0)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, err_msg=f"{where} {key}")


def test_every_function_matches_numpy_and_scipy_in_float64() -> None:
    """All sizes and the batch in one program, on the interpreter."""
    xs = [inputs(k, shape) for k, shape in enumerate(SHAPES)]
    got = ig.jit(lambda xs: [compute(x) for x in xs], backend="interp")(xs)
    for shape, x, g in zip(SHAPES, xs, got):
        assert_close(g, reference(x), 1e-11, f"{shape}:")
        assert g["piv"].dtype == np.int32 and g["lu"].dtype == np.float64


def test_float32_on_the_interpreter() -> None:
    x32 = {k: v.astype(np.float32) for k, v in inputs(11, (3, 4, 5, 5)).items()}
    g32 = ig.jit(compute, backend="interp")(x32)
    assert_close(g32, reference({k: v.astype(np.float64) for k, v in x32.items()}), 2e-4, "float32:")
    assert all(leaf.dtype in (np.float32, np.int32) for leaf in ig.tree_leaves(g32))


def _some(x: dict) -> dict:
    L = ig.linalg
    return {"cholesky": L.cholesky(x["s"]), "tri_lower": L.solve_triangular(x["lower"], x["b"], lower=True),
            "solve": L.solve(x["a"], x["b"]), "det": L.det(x["a"]), "slogdet": L.slogdet(x["a"])}


def test_compiled_float64_and_float32() -> None:
    """One CPU compile (kept small: LLVM's optimization time grows faster than the module),
    n = 17 in float64 and float32."""
    x64 = inputs(10, (17, 17))
    x32 = {k: v.astype(np.float32) for k, v in x64.items()}
    g64, g32 = ig.jit(lambda p, q: (_some(p), _some(q)))(x64, x32)
    want = reference(x64)
    # A compiled gradient: d log|det| / dA = A^{-T}.
    grad = ig.jit(ig.grad(lambda a: ig.linalg.slogdet(a)[1]))(x64["a"])
    np.testing.assert_allclose(grad, np.linalg.inv(x64["a"]).T, rtol=1e-11, atol=1e-13)
    assert_close(g64, {k: want[k] for k in g64}, 1e-11, "cpu float64:")
    assert_close(g32, {k: want[k] for k in g32}, 2e-4, "cpu float32:")
    assert all(leaf.dtype == np.float32 for leaf in ig.tree_leaves(g32))


def test_cpu_calls_lapack_and_the_gpu_pipeline_inlines_the_loops() -> None:
    """On the CPU each factorization is one LAPACK call per matrix (its reference loop gone);
    the GPU pipeline's linalg stage has the loops inline, no call."""
    from irgrad.pipelines import GPU_STAGES
    from irgrad.registry import run_pipeline

    x = inputs(11, (2, 5, 5))

    def f(a, s, b):
        L = ig.linalg
        return L.solve(a, b), L.cholesky(s), L.slogdet(a)[1]

    llvm = ig.jit(f).lower(x["a"], x["s"], x["b"]).as_text("llvm")
    for routine in ("dgetrf", "dtrsm", "dpotrf"):
        assert f"llvm.call @irgrad_lapack_{routine}" in llvm
    module = ig.trace(f, x["a"], x["s"], x["b"]).executable_module().clone()
    run_pipeline(module, GPU_STAGES["linalg"])
    text = str(module)
    assert "scf.for" in text and "func.call" not in text and "irgrad.factorization" not in text


def test_without_lapack_the_runtime_calls_the_numpy_reference() -> None:
    """IRGRAD_LAPACK=none: the same compiled program, its LAPACK entry points numpy callbacks."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import numpy as np, irgrad as ig
        from irgrad.backends.cpu.lapack import lapack_info
        rng = np.random.default_rng(3)
        m = rng.standard_normal((2, 6, 6))
        a = m @ np.swapaxes(m, -1, -2) + 6 * np.eye(6)
        b = rng.standard_normal((2, 6, 2))
        x, g = ig.jit(lambda a, b: (ig.linalg.solve(a, b),
                                    ig.grad(lambda a: ig.sum(ig.linalg.cholesky(a)))(a)))(a, b)
        assert not lapack_info().available
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-12)
        eps = 1e-6
        e = np.zeros_like(a); e[1, 3, 2] = e[1, 2, 3] = eps  # a symmetric direction
        fd = (np.linalg.cholesky(a + e).sum() - np.linalg.cholesky(a - e).sum()) / (2 * eps)
        assert abs(g[1, 3, 2] + g[1, 2, 3] - fd) < 1e-6, (g[1, 3, 2], g[1, 2, 3], fd)
        print("ok")
        """
    )
    import os

    env = dict(os.environ, IRGRAD_LAPACK="none", IRGRAD_CACHE_DIR="off")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_eager_calls() -> None:
    x = inputs(3, (4, 4))
    assert_close(compute(x), reference(x), 1e-12, "eager:")
    c, lower = ig.linalg.cho_factor(x["s"], lower=True)
    assert lower is True and isinstance(c, np.ndarray)
    # Integer input becomes float32, as jax.numpy.linalg.
    d = ig.linalg.det(np.array([[2, 1], [1, 3]]))
    assert d.dtype == np.float32 and d == pytest.approx(5.0)


def test_the_ir_does_not_grow_with_n() -> None:
    """One loop per factorization or solve, whatever n: the traced program for n = 4 and n = 40
    has the same ops (only the sizes in the types differ). (det and slogdet add the log2(n)
    levels of `prod`'s multiply tree.)"""

    def ops(n: int) -> list[str]:
        a = np.eye(n)
        L = ig.linalg
        text = str(ig.trace(lambda a, b: (L.solve(a, b), L.cholesky(a), L.lu_factor(a), L.inv(a)), a, a[0]))
        return re.findall(r"= ([a-z_]+\.[a-z_]+)", text)

    assert ops(4) == ops(40)


def test_lu_pieces_and_pivots() -> None:
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 10.0]])
    p, lo, up = ig.linalg.lu(a)
    np.testing.assert_allclose(p @ lo @ up, a, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(np.triu(lo, 1), 0)
    np.testing.assert_array_equal(np.diag(lo), 1)
    np.testing.assert_array_equal(np.tril(up, -1), 0)
    pl, up2 = ig.linalg.lu(a, permute_l=True)
    np.testing.assert_allclose(pl @ up2, a, rtol=1e-15, atol=1e-15)
    _, piv = ig.linalg.lu_factor(a)
    np.testing.assert_array_equal(piv, sl.lu_factor(a)[1])  # [2, 2, 2]: 0-based, as scipy


# --- derivatives ----------------------------------------------------------------------------------

RNG = np.random.default_rng(42)
A3 = general(RNG, (3, 3))
S3 = spd(RNG, (3, 3))
B3 = RNG.standard_normal((3, 2))
AB = general(RNG, (2, 3, 3))


def _sym(a):
    return 0.5 * (a + a.T)


@pytest.mark.parametrize(
    "name, fn, args",
    [
        ("cholesky", lambda a: ig.linalg.cholesky(_sym(a)), (S3,)),
        ("solve", lambda a, b: ig.linalg.solve(a, b), (A3, B3)),
        ("det", lambda a: ig.linalg.det(a), (A3,)),
        ("slogdet", lambda a: ig.linalg.slogdet(a)[1], (A3,)),
        ("qr_tall", ig.linalg.qr, (RNG.standard_normal((4, 3)),)),
    ],
)
def test_second_order_derivatives_match_finite_differences(name, fn, args) -> None:
    ig.check_grads(fn, args, order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    "name, fn, args",
    [
        ("solve_triangular", lambda a, b: ig.linalg.solve_triangular(a, b, lower=True), (A3, B3)),
        ("solve_triangular_T_unit", lambda a, b: ig.linalg.solve_triangular(a, b, trans=1, unit_diagonal=True), (A3, B3)),
        ("inv", ig.linalg.inv, (A3,)),
        ("lu", lambda a: ig.linalg.lu(a)[1:], (A3,)),
        ("lu_solve", lambda a, b: ig.linalg.lu_solve(ig.linalg.lu_factor(a), b, trans=1), (A3, B3)),
        ("cho_solve", lambda a, b: ig.linalg.cho_solve(ig.linalg.cho_factor(_sym(a)), b), (S3, B3)),
        ("matrix_power", lambda a: ig.linalg.matrix_power(a, -2), (A3,)),
        ("batched_solve", lambda a, b: ig.linalg.solve(a, b), (AB, B3[:, 0])),
        ("qr_wide", ig.linalg.qr, (RNG.standard_normal((2, 4)),)),
    ],
)
def test_first_order_derivatives_match_finite_differences(name, fn, args) -> None:
    ig.check_grads(fn, args, order=1, modes=("fwd", "rev"))


def test_gradients_match_closed_forms_at_first_and_second_order() -> None:
    a, w = A3, RNG.standard_normal((3, 3))
    ainv = np.linalg.inv(a)
    # d det / dA = det A^{-T}; d log|det| / dA = A^{-T} (on a batch).
    np.testing.assert_allclose(ig.grad(ig.linalg.det)(a), np.linalg.det(a) * ainv.T, rtol=1e-12)
    batch_grad = ig.grad(lambda x: ig.sum(ig.linalg.slogdet(x)[1]))(AB)
    np.testing.assert_allclose(batch_grad, np.swapaxes(np.linalg.inv(AB), -1, -2), rtol=1e-12)
    # Reverse over reverse: d <A^{-T}, W> / dA = -(A^{-1} W A^{-1})^T.
    second = ig.grad(lambda x: ig.sum(ig.grad(lambda y: ig.linalg.slogdet(y)[1])(x) * w))(a)
    np.testing.assert_allclose(second, -(ainv @ w @ ainv).T, rtol=1e-11, atol=1e-13)
    # Forward over reverse: the Hessian of log|det|, -A^{-1}[j, k] A^{-1}[l, i] at [i, j, k, l].
    hess = ig.hessian(lambda y: ig.linalg.slogdet(y)[1])(a)
    np.testing.assert_allclose(hess, -np.einsum("jk,li->ijkl", ainv, ainv), rtol=1e-11, atol=1e-13)


TAPE_N, TAPE_BATCH = 5, 2  # distinct sizes, so a tape tensor<5x2x5x...> is recognizable


def _tapes(text: str) -> list[str]:
    """Tensor types shaped (trip count n, batch, n, k): a loop's carried block saved per iteration."""
    return sorted(set(re.findall(rf"tensor<{TAPE_N}x{TAPE_BATCH}x{TAPE_N}x\d+xf64>", text)))


def test_the_gradient_holds_no_tape_of_the_loops() -> None:
    """Reverse mode transposes the custom_jvp rules: the solve loops run backwards reading only
    the (primal) matrix, so no per-iteration copy of the carried (n, k) or (n, n) block exists.
    Differentiating a loop itself (the raw Cholesky loop) does tape: tensor<5x2x5x5xf64>."""
    rng = np.random.default_rng(5)
    shape = (TAPE_BATCH, TAPE_N, TAPE_N)
    a, s, b = general(rng, shape), spd(rng, shape), rng.standard_normal((TAPE_BATCH, TAPE_N, 3))

    def everything(a, s, b):
        L = ig.linalg
        return (ig.sum(L.cholesky(s) ** 2) + ig.sum(L.solve(a, b) ** 2) + ig.sum(L.inv(a) ** 2)
                + ig.sum(L.det(a)) + ig.sum(L.slogdet(a)[1]) + ig.sum(L.lu(a)[2] ** 2)
                + ig.sum(L.solve_triangular(s, b, lower=True) ** 2)
                + ig.sum(L.cho_solve(L.cho_factor(s), b) ** 2)
                + ig.sum(L.qr(a)[0] * L.qr(a)[1]))

    program = ig.trace(ig.grad(everything, argnums=(0, 1, 2)), a, s, b)
    text = str(program.executable_module())
    # Every factorization is an op now (qr too): the differentiated program has no loop at all.
    assert "scf.for" not in text and "autodiff." not in text
    assert "nn.qr" in text and "nn.lu" in text and "nn.cholesky" in text
    assert _tapes(text) == []
    # The cotangents still come out right (a spot check of one entry against finite differences).
    ga = program(a, s, b)[0]
    e = np.zeros(shape)
    e[1, 2, 3] = 1e-6
    fd = (ig.jit(everything, backend="interp")(a + e, s, b) - ig.jit(everything, backend="interp")(a - e, s, b)) / 2e-6
    assert ga[1, 2, 3] == pytest.approx(fd, rel=1e-6)

    taped = ig.trace(ig.grad(lambda x: ig.sum(reference_loops.cholesky_loop(x))), s)
    assert _tapes(str(taped.executable_module())) == [f"tensor<{TAPE_N}x{TAPE_BATCH}x{TAPE_N}x{TAPE_N}xf64>"]


# --- singular and indefinite inputs ---------------------------------------------------------------


def test_non_positive_definite_cholesky_is_nan_per_batch_element() -> None:
    good = np.array([[4.0, 2.0], [2.0, 3.0]])
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    semi = np.array([[1.0, 1.0], [1.0, 1.0]])  # singular: a zero pivot is not positive
    out = ig.linalg.cholesky(np.stack([good, bad, semi, -good]))
    np.testing.assert_allclose(out[0], np.linalg.cholesky(good), rtol=1e-15)
    assert np.isnan(out[1:]).all()
    assert np.isnan(ig.grad(lambda a: ig.sum(ig.linalg.cholesky(a)))(bad)).all()


def test_singular_matrices() -> None:
    sing = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    zero_col = np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 5.0, 7.0]])
    for m in (sing, zero_col):
        lu, piv = ig.linalg.lu_factor(m)
        with pytest.warns(sl.LinAlgWarning):
            lu_ref, piv_ref = sl.lu_factor(m)
        np.testing.assert_allclose(lu, lu_ref, rtol=1e-15, atol=1e-15)  # LAPACK's getrf exactly
        np.testing.assert_array_equal(piv, piv_ref)
        assert ig.linalg.det(m) == 0.0
        sign, logdet = ig.linalg.slogdet(m)
        assert sign == 0.0 and logdet == -np.inf
        # numpy raises LinAlgError; here (as JAX) the result is not finite.
        assert not np.isfinite(ig.linalg.solve(m, np.ones(3))).all()
        assert not np.isfinite(ig.linalg.inv(m)).all()


# --- vmap -----------------------------------------------------------------------------------------


def test_vmap_over_right_hand_sides_and_matrices() -> None:
    rng = np.random.default_rng(8)
    a, bs = general(rng, (4, 4)), rng.standard_normal((6, 4))
    expected = np.linalg.solve(a, bs.T).T
    np.testing.assert_allclose(ig.vmap(lambda b: ig.linalg.solve(a, b))(bs), expected, rtol=1e-12)
    np.testing.assert_allclose(ig.vmap(ig.linalg.solve, in_axes=(None, 0))(a, bs), expected, rtol=1e-12)
    stack = general(rng, (3, 4, 4))
    np.testing.assert_allclose(ig.vmap(ig.linalg.det)(stack), np.linalg.det(stack), rtol=1e-12)
    grads = ig.vmap(ig.grad(lambda m: ig.linalg.slogdet(m)[1]))(stack)
    np.testing.assert_allclose(grads, np.swapaxes(np.linalg.inv(stack), -1, -2), rtol=1e-12)


# --- errors ---------------------------------------------------------------------------------------


def test_errors() -> None:
    L = ig.linalg
    with pytest.raises(ig.ShapeError, match=r"cholesky: expected a square matrix .* got \(2, 3\)"):
        L.cholesky(np.ones((2, 3)))
    with pytest.raises(ig.ShapeError, match=r"det: expected a square matrix .* got \(3,\)"):
        L.det(np.ones(3))
    with pytest.raises(ig.ShapeError, match=r"solve: a has shape \(3, 3\) but b has shape \(4,\): b's length must be 3"):
        L.solve(np.eye(3), np.ones(4))
    with pytest.raises(ig.ShapeError, match=r"solve: a has shape \(3, 3\) but b has shape \(4, 2\): b's rows must be 3"):
        L.solve(np.eye(3), np.ones((4, 2)))
    with pytest.raises(ig.ShapeError, match="do not broadcast"):
        L.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1)))
    with pytest.raises(ig.ShapeError, match="solve_triangular: a has shape"):
        L.solve_triangular(np.eye(3), np.ones((2, 1)))
    with pytest.raises(ValueError, match="trans must be"):
        L.solve_triangular(np.eye(2), np.ones(2), trans=3)
    with pytest.raises(ig.ShapeError, match="lu_solve: piv must be integers of shape"):
        L.lu_solve((np.eye(3), np.zeros(2, np.int32)), np.ones(3))
    with pytest.raises(TypeError, match="exponent must be an integer"):
        L.matrix_power(np.eye(2), 1.5)
    with pytest.raises(ValueError, match="qr: mode must be"):
        L.qr(np.eye(2), mode="raw")
    with pytest.raises(ig.DTypeError, match="float16 is not supported"):
        L.inv(np.eye(2, dtype=np.float16))


# --- eigh, svd and what is built on them ------------------------------------------------------------

SPECTRAL_SHAPES = [(1, 1), (2, 2), (5, 5), (8, 8), (2, 3, 4, 4)]


def _sw(m: np.ndarray) -> np.ndarray:
    return np.swapaxes(m, -1, -2)


def _spectral_inputs(seed: int, shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal(shape)
    n = shape[-1]
    return {
        "sym": m + _sw(m),
        "upper_only": np.triu(m + _sw(m)) + np.tril(100 * rng.standard_normal(shape), -1),  # only the upper triangle is read
        "a": general(rng, shape),
        "tall": rng.standard_normal((*shape[:-2], n + 2, n)),
        "wide": rng.standard_normal((*shape[:-2], n, n + 3)),
    }


def _spectral(x: dict, everything: bool) -> dict:
    """eigh and svd; with `everything`, the functions built on them too (tracing each costs time)."""
    L = ig.linalg
    out = {
        "eigh": L.eigh(x["sym"]),
        "eigh_U": L.eigh(x["upper_only"], UPLO="U", symmetrize_input=False),
        "svd": L.svd(x["a"]),
        "svd_tall": L.svd(x["tall"], full_matrices=False),
        "svd_wide": L.svd(x["wide"], full_matrices=False),
    }
    if everything:
        out.update({
            "eigvalsh": L.eigvalsh(x["sym"]),
            "svdvals": L.svd(x["tall"], compute_uv=False),
            "svdvals_wide": L.svdvals(x["wide"]),
            "pinv": L.pinv(x["tall"]),
            "norm": (L.norm(x["a"], 2, axis=(-2, -1)), L.norm(x["wide"], -2, axis=(-1, -2), keepdims=True)),
            "rank_cond": (L.matrix_rank(x["tall"]), L.cond(x["a"]), L.cond(x["a"], -2), L.cond(x["a"], 1)),
        })  # fmt: skip
    return out


def _check_spectral(got: dict, x: dict, rtol: float, where: str) -> None:
    sym, scale = x["sym"], max(np.abs(x["sym"]).max(), 1.0)
    n = sym.shape[-1]
    for key in ("eigh", "eigh_U"):
        w, v = got[key]
        np.testing.assert_allclose(w, np.linalg.eigvalsh(sym), rtol=rtol, atol=rtol * scale, err_msg=f"{where} {key}")
        np.testing.assert_allclose(sym @ v, v * w[..., None, :], atol=rtol * scale, err_msg=f"{where} {key} residual")
        np.testing.assert_allclose(_sw(v) @ v, np.broadcast_to(np.eye(n), v.shape), atol=rtol, err_msg=f"{where} {key}")
    for key, m in (("svd", x["a"]), ("svd_tall", x["tall"]), ("svd_wide", x["wide"])):
        u, s, vt = got[key]
        k = min(m.shape[-2:])
        assert u.shape == (*m.shape[:-1], k) and vt.shape == (*m.shape[:-2], k, m.shape[-1]), key
        sc = np.abs(m).max()
        np.testing.assert_allclose(s, np.linalg.svd(m, compute_uv=False), rtol=rtol, atol=rtol * sc, err_msg=f"{where} {key}")
        np.testing.assert_allclose((u * s[..., None, :]) @ vt, m, atol=rtol * sc, err_msg=f"{where} {key} u s vt")
        eye = np.broadcast_to(np.eye(k), (*m.shape[:-2], k, k))
        np.testing.assert_allclose(_sw(u) @ u, eye, atol=rtol, err_msg=f"{where} {key} u")
        np.testing.assert_allclose(vt @ _sw(vt), eye, atol=rtol, err_msg=f"{where} {key} vt")
    if "eigvalsh" not in got:
        return
    np.testing.assert_allclose(got["eigvalsh"], np.linalg.eigvalsh(sym), rtol=rtol, atol=rtol * scale)
    np.testing.assert_allclose(got["svdvals"], np.linalg.svd(x["tall"], compute_uv=False), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["svdvals_wide"], np.linalg.svd(x["wide"], compute_uv=False), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(got["pinv"], np.linalg.pinv(x["tall"]), rtol=rtol, atol=rtol, err_msg=f"{where} pinv")
    a, wide = x["a"], x["wide"]
    assert_close({"norm": got["norm"]}, {"norm": (np.linalg.norm(a, 2, axis=(-2, -1)), np.linalg.norm(wide, -2, axis=(-1, -2), keepdims=True))}, rtol, where)
    want = (np.linalg.matrix_rank(x["tall"]).astype(np.int32), np.linalg.cond(a), np.linalg.cond(a, -2), np.linalg.cond(a, 1))
    assert_close({"rank_cond": got["rank_cond"]}, {"rank_cond": want}, rtol * 10, where)


def test_eigh_svd_and_friends_match_numpy_in_float64() -> None:
    """Sizes 1, 2, 5, 8 and a (2, 3) batch, in one program on the interpreter; pinv, norm, cond,
    matrix_rank, eigvalsh and svdvals on the last two only."""
    xs = [_spectral_inputs(100 + k, shape) for k, shape in enumerate(SPECTRAL_SHAPES)]
    got = ig.jit(lambda xs: [_spectral(x, k >= 3) for k, x in enumerate(xs)], backend="interp")(xs)
    for shape, x, g in zip(SPECTRAL_SHAPES, xs, got):
        _check_spectral(g, x, 1e-12, f"{shape}:")


def test_eigh_compiled_float64_and_float32_and_eager() -> None:
    x = _spectral_inputs(7, (2, 3, 4, 4))["sym"]
    w, v = ig.jit(ig.linalg.eigh)(x)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(x), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(x @ v, v * w[..., None, :], atol=1e-12)
    w32, v32 = ig.linalg.eigh(x.astype(np.float32))
    assert w32.dtype == v32.dtype == np.float32
    np.testing.assert_allclose(w32, np.linalg.eigvalsh(x), atol=1e-5)
    # Eagerly, and an integer input becomes float32.
    w_eager = ig.linalg.eigvalsh(x[0, 0])
    np.testing.assert_allclose(w_eager, np.linalg.eigvalsh(x[0, 0]), rtol=1e-12, atol=1e-13)
    s = ig.linalg.svdvals(np.array([[3, 0], [0, 4]]))
    assert s.dtype == np.float32 and list(s) == [4.0, 3.0]


def test_lstsq_pinv_and_rank_deficient_inputs() -> None:
    rng = np.random.default_rng(9)
    a, b, bm = rng.standard_normal((6, 4)), rng.standard_normal(6), rng.standard_normal((6, 2))
    for rhs in (b, bm):
        got, want = ig.linalg.lstsq(a, rhs), np.linalg.lstsq(a, rhs)
        for g, w in zip(got, want):
            assert np.shape(g) == np.shape(w)
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
        assert got[2].dtype == np.int32
    # Rank 2 (of 4): a zero singular value is dropped, u stays orthonormal, x is the minimum-norm one.
    low = rng.standard_normal((6, 2)) @ rng.standard_normal((2, 4))
    u, s, vt = ig.linalg.svd(low, full_matrices=False)
    np.testing.assert_allclose(_sw(u) @ u, np.eye(4), atol=1e-13)
    np.testing.assert_allclose((u * s) @ vt, low, atol=1e-13)
    np.testing.assert_allclose(ig.linalg.pinv(low), np.linalg.pinv(low), rtol=1e-10, atol=1e-12)
    x, resid, rank, sv = ig.linalg.lstsq(low, bm)
    np.testing.assert_allclose(x, np.linalg.lstsq(low, bm)[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(resid, np.sum((bm - low @ x) ** 2, axis=0), rtol=1e-12)  # JAX: residuals always
    assert rank == 2 and ig.linalg.matrix_rank(low) == 2 and ig.linalg.matrix_rank(low, tol=10.0) == np.sum(sv > 10)
    assert ig.linalg.matrix_rank(np.zeros(3)) == 0 and ig.linalg.matrix_rank(np.ones(3)) == 1
    # Repeated eigenvalues: eigh is still right; the eigenvalues' derivative is finite, the
    # eigenvectors' is not (as JAX).
    q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    rep = (q * np.array([1.0, 1.0, 2.0, 3.0])) @ q.T
    w, v = ig.linalg.eigh(rep)
    np.testing.assert_allclose(w, [1, 1, 2, 3], atol=1e-13)
    np.testing.assert_allclose(rep @ v, v * w, atol=1e-13)
    np.testing.assert_allclose(ig.grad(lambda m: ig.linalg.eigvalsh(m)[3])(rep), np.outer(q[:, 3], q[:, 3]), atol=1e-12)
    _, dv = ig.jvp(lambda m: ig.linalg.eigh(m)[1], (rep,), (np.ones((4, 4)),))
    assert np.abs(dv).max() > 1e10  # 1 / (w_1 - w_0), w_1 - w_0 at roundoff level
    _, dv = ig.jvp(lambda m: ig.linalg.eigh(m)[1], (np.diag([1.0, 1.0, 2.0, 3.0]),), (np.ones((4, 4)),))
    assert not np.isfinite(dv).all()  # exactly equal eigenvalues: inf / NaN


C4 = RNG.standard_normal(4)
W4 = RNG.standard_normal((4, 4))
SYM4 = (lambda m: m + m.T)(RNG.standard_normal((4, 4)))


def _recon(w, v):
    return ig.sum(((v * w) @ v.T) * W4)


@pytest.mark.parametrize(
    "name, fn, args",
    [
        ("eigh_w_recon_abs_v", lambda a: (lambda w, v: (w * C4, _recon(w, v), ig.abs(v.T @ C4)))(*ig.linalg.eigh(a)), (SYM4,)),
        ("eigvalsh_upper", lambda a: ig.linalg.eigvalsh(a, UPLO="U", symmetrize_input=False), (SYM4,)),
        ("svdvals_batched_wide", lambda a: ig.linalg.svd(a, compute_uv=False), (RNG.standard_normal((2, 3, 4)),)),
        ("svd_tall_sign_free", lambda a: (lambda u, s, vt: ((u * s) @ vt, ig.abs(u.T @ C4), ig.abs(vt @ C4[:3])))(
            *ig.linalg.svd(a, full_matrices=False)), (RNG.standard_normal((4, 3)),)),
        ("svd_wide_sign_free", lambda a: (lambda u, s, vt: (u @ W4[:3, :3] @ vt, ig.abs(vt @ C4)))(
            *ig.linalg.svd(a, full_matrices=False)), (RNG.standard_normal((3, 4)),)),
        ("pinv", ig.linalg.pinv, (RNG.standard_normal((4, 3)),)),
        ("lstsq", lambda a, b: ig.linalg.lstsq(a, b)[:2], (RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2)))),
        ("norm2_cond", lambda a: (ig.linalg.norm(a, -2), ig.linalg.cond(a)), (A3,)),
        # Complete bases: the completing columns enter through their span (their projector),
        # which is all a non-unique basis determines; the leading columns as in the reduced case.
        ("svd_full_tall_span", lambda a: (lambda u, s, vt: (u[:, 3:] @ u[:, 3:].T, ig.abs(u[:, :3].T @ C4), s, ig.abs(vt)))(
            *ig.linalg.svd(a)), (RNG.standard_normal((4, 3)),)),
        ("svd_full_wide_span", lambda a: (lambda u, s, vt: (vt[2:].T @ vt[2:], ig.abs(u), s))(
            *ig.linalg.svd(a)), (RNG.standard_normal((2, 5)),)),
        ("qr_complete_span", lambda a: (lambda q, r: (q[:, 2:] @ q[:, 2:].T, q[:, :2], r))(
            *ig.linalg.qr(a, mode="complete")), (RNG.standard_normal((5, 2)),)),
    ],
)
def test_spectral_derivatives_match_finite_differences(name, fn, args) -> None:
    ig.check_grads(fn, args, order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("backend", ["interp", "cpu"])
def test_hermitian_svd_and_pinv(backend) -> None:
    """numpy's hermitian=True: svd through eigh (s = |w| descending, vh's rows of negative
    eigenvalues negated), the same singular values and reconstruction; pinv the same matrix."""
    x = RNG.standard_normal((2, 5, 5))
    a = x + np.swapaxes(x, -1, -2)
    u, s, vt = ig.jit(lambda a: ig.linalg.svd(a, hermitian=True), backend=backend)(a)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-13)
    np.testing.assert_allclose(np.einsum("bij,bj,bjk->bik", u, s, vt), a, atol=1e-13)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(5), u.shape), atol=1e-13)
    values = ig.jit(lambda a: ig.linalg.svd(a, compute_uv=False, hermitian=True), backend=backend)(a)
    np.testing.assert_allclose(values, s, rtol=1e-13)
    np.testing.assert_allclose(ig.linalg.pinv(a[0], hermitian=True), np.linalg.pinv(a[0], hermitian=True), atol=1e-12)
    ig.check_grads(lambda m: (lambda u, s, vt: (s, (u * s) @ vt, ig.abs(u)))(*ig.linalg.svd(m, hermitian=True)),
                   (a[0],), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("backend", ["interp", "cpu"])
@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (2, 5, 2), (4, 4)])
def test_full_svd_and_complete_qr_of_non_square_matrices(shape, backend) -> None:
    """numpy's defaults: svd's full_matrices=True completes the shorter factor to a square
    orthogonal matrix whose leading columns (rows) are the reduced SVD's; qr's mode='complete' is
    numpy's (LAPACK's Householder reflections, the completing columns included)."""
    a = RNG.standard_normal(shape)
    m, n = shape[-2:]
    k = min(m, n)
    u, s, vt = ig.jit(lambda x: ig.linalg.svd(x), backend=backend)(a)
    ur, sr, vtr = ig.jit(lambda x: ig.linalg.svd(x, full_matrices=False), backend=backend)(a)
    assert u.shape == (*shape[:-2], m, m) and vt.shape == (*shape[:-2], n, n)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(m), u.shape), atol=1e-14)
    np.testing.assert_allclose(vt @ np.swapaxes(vt, -1, -2), np.broadcast_to(np.eye(n), vt.shape), atol=1e-14)
    np.testing.assert_allclose(u[..., :k], ur, atol=1e-14)
    np.testing.assert_allclose(vt[..., :k, :], vtr, atol=1e-14)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-13)
    if len(shape) == 2 and m > n:
        q, r = ig.jit(lambda x: ig.linalg.qr(x, mode="complete"), backend=backend)(a)
        qn, rn = np.linalg.qr(a, mode="complete")
        assert q.shape == (m, m) and r.shape == (m, n)
        np.testing.assert_allclose(q, qn, atol=1e-14)
        np.testing.assert_allclose(r, rn, atol=1e-14)


def test_spectral_errors() -> None:
    L = ig.linalg
    with pytest.raises(ig.ShapeError, match=r"eigh: expected a square matrix .* got \(2, 3\)"):
        L.eigh(np.ones((2, 3)))
    with pytest.raises(ig.ShapeError, match=r"eigh: expected a square matrix .* got \(3,\)"):
        L.eigvalsh(np.ones(3))
    with pytest.raises(ValueError, match="eigh: UPLO must be 'L' or 'U'"):
        L.eigh(np.eye(2), UPLO="X")
    with pytest.raises(ig.ShapeError, match=r"svd: expected a matrix .* got \(3,\)"):
        L.svd(np.ones(3))
    with pytest.raises(ig.ShapeError, match="lstsq: a must be 2-D"):
        L.lstsq(np.ones((2, 3, 3)), np.ones(3))
    with pytest.raises(ig.ShapeError, match=r"lstsq: b must be \(m,\) or \(m, k\) with m = 3"):
        L.lstsq(np.ones((3, 2)), np.ones(4))
    with pytest.raises(TypeError, match="pinv: rtol must be None or a Python float"):
        L.pinv(np.eye(2), rtol=np.ones(2))
    with pytest.raises(ig.ShapeError, match=r"cond: expected a square matrix"):
        L.cond(np.ones((2, 3)), 1)

"""Every nn op has all its parts; a new op that misses one fails here, naming the op and the part.

The parts of an op (docs/contributing.md, "Adding an op", lists where each one goes):
- schema: a class of the `NN` dialect built on `NNOperation`, with a docstring showing its IR;
- verifier: op-specific checks (`verify_semantics`) or shape inference (`expected_result_type`);
- interpreter: an `@impl` of the reference interpreter (irgrad/backends/interpreter/nn_*.py);
- lowering: a pattern of `convert-nn-to-linalg` (irgrad/lowering/nn_to_linalg/<category>.py);
- jvp, vjp: rules in irgrad/autodiff/rules/<family>.py, or `non_differentiable(...)`;
- batching: a `@batch_rule` for the op or its family (ops without operands need none);
- docs: a section of docs/dialects/nn.md naming it.

KNOWN_GAPS lists the parts missing today, each with its reason; an entry that is no longer a
gap fails too, so the list stays exact.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.interpreter import InterpreterFunctions

import irgrad  # noqa: F401  (applies the xDSL patches first)
from irgrad.autodiff import batching  # noqa: F401  (registers the batching rules)
from irgrad.autodiff.registry import BATCH_RULES, JVP_RULES, NON_DIFFERENTIABLE, VJP_RULES
from irgrad.autodiff.rules import load_rules
from irgrad.backends.interpreter import runner
from irgrad.dialects import nn
from irgrad.dialects.nn.base import NNOperation
from irgrad.lowering.nn_to_linalg import populate_nn_to_linalg_patterns

ROOT = Path(__file__).resolve().parents[3]
PARTS = ("schema", "verifier", "interpreter", "lowering", "jvp", "vjp", "batching", "docs")

_FACTORIZATION = "lowered by nn-expand-factorizations (LAPACK calls or reference loops) before convert-nn-to-linalg"
_COMPLEX = ("rewritten into real ops on (re, im) pairs by nn-expand-complex, which runs before autodiff, "
            "batching and convert-nn-to-linalg (docs/dialects/nn.md, 'Complex numbers')")
_FFT = ("written as matmuls by small DFT matrices and elementwise ops by nn-expand-fft, which runs before "
        "nn-expand-complex, autodiff, batching and convert-nn-to-linalg (irgrad/transforms/nn/nn_expand_fft.py)")
KNOWN_GAPS: dict[tuple[str, str], str] = {
    ("nn.cholesky", "lowering"): _FACTORIZATION,
    ("nn.triangular_solve", "lowering"): _FACTORIZATION,
    ("nn.lu", "lowering"): _FACTORIZATION,
    ("nn.eigh", "lowering"): _FACTORIZATION,
    ("nn.svd", "lowering"): _FACTORIZATION,
    ("nn.qr", "lowering"): _FACTORIZATION,
    ("nn.eig", "lowering"): _FACTORIZATION + " (a LAPACK call or the interpreter's numpy only: no reference loop, no GPU)",
    **{("nn.eig", part): "eig's derivative (JAX's _eig_jvp_rule, complex) is not implemented yet; the op is "
       "declared not_supported_yet, so differentiating it is an error that says so" for part in ("jvp", "vjp")},
    **{(op, part): _COMPLEX for op in ("nn.real", "nn.imag", "nn.complex", "nn.conj")
       for part in ("lowering", "jvp", "vjp", "batching")},
    **{("nn.fft", part): _FFT for part in ("lowering", "jvp", "vjp", "batching")},
}

WHERE = {
    "schema": "irgrad/dialects/nn/<family>.py (an NNOperation subclass with a docstring and IR example) "
              "and the NN Dialect's list in irgrad/dialects/nn/__init__.py",
    "verifier": "verify_semantics / expected_result_type in the op's family module",
    "interpreter": "an @numpy_impl in irgrad/backends/interpreter/nn_<family>.py",
    "lowering": "a pattern in irgrad/lowering/nn_to_linalg/<category>.py",
    "jvp": "a @jvp_rule in irgrad/autodiff/rules/<family>.py (or non_differentiable(...))",
    "vjp": "a @vjp_rule in irgrad/autodiff/rules/<family>.py (or non_differentiable(...))",
    "batching": "a @batch_rule for the op or its family in irgrad/autodiff/rules/<family>.py",
    "docs": "a section in docs/dialects/nn.md",
}


def _interpreted() -> set[type]:
    found: set[type] = set()
    for value in vars(runner).values():
        if isinstance(value, type) and issubclass(value, InterpreterFunctions) and value is not InterpreterFunctions:
            found.update(op for op, _ in value._impls())
    return found


def _lowered() -> set[type]:
    patterns: list = []
    populate_nn_to_linalg_patterns(patterns)
    return {op for pattern in patterns for op in getattr(pattern, "OPS", ())}


def _has_batching_rule(op: type) -> bool:
    return any(cls in BATCH_RULES for cls in op.__mro__)


def _has_operands(op: type) -> bool:
    return any(not name.startswith("_") for name, _ in op.get_irdl_definition().operands)


def _missing_parts() -> dict[str, list[str]]:
    load_rules()
    interpreted, lowered = _interpreted(), _lowered()
    doc = (ROOT / "docs/dialects/nn.md").read_text()
    missing: dict[str, list[str]] = {}
    for op in nn.NN.operations:
        gaps = []
        if not (issubclass(op, NNOperation) and op.__doc__ and op.name in op.__doc__):
            gaps.append("schema")
        if (op.verify_semantics is NNOperation.verify_semantics
                and op.expected_result_type is NNOperation.expected_result_type
                and op.verify_ is NNOperation.verify_):
            gaps.append("verifier")
        if op not in interpreted:
            gaps.append("interpreter")
        if op not in lowered:
            gaps.append("lowering")
        if op not in NON_DIFFERENTIABLE:
            gaps += [mode for mode, table in (("jvp", JVP_RULES), ("vjp", VJP_RULES)) if op not in table]
        if _has_operands(op) and not _has_batching_rule(op):
            gaps.append("batching")
        if not re.search(rf"(?<![\w.]){re.escape(op.name)}(?![\w])", doc):
            gaps.append("docs")
        missing[op.name] = gaps
    return missing


MISSING = _missing_parts()


@pytest.mark.parametrize("name", sorted(MISSING))
def test_op_has_every_part(name: str):
    unexplained = [part for part in MISSING[name] if (name, part) not in KNOWN_GAPS]
    assert not unexplained, f"{name} is missing: " + "; ".join(f"{p} ({WHERE[p]})" for p in unexplained) + \
        " — see docs/contributing.md, 'Adding an op'"


def test_known_gaps_are_still_gaps():
    stale = [f"{name} {part}" for (name, part) in KNOWN_GAPS if part not in MISSING.get(name, PARTS)]
    assert not stale, f"no longer missing, remove from KNOWN_GAPS: {stale}"
    assert all(part in PARTS and reason for (_, part), reason in KNOWN_GAPS.items())


def test_the_checks_see_the_tables():
    """The part checks find real entries (an empty table would make every op 'missing')."""
    assert len(MISSING) == len(list(nn.NN.operations)) > 50
    assert nn.ErfOp in _interpreted() and nn.ErfOp in _lowered() and nn.ErfOp in JVP_RULES
    assert MISSING["nn.erf"] == []

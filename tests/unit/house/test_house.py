"""The rules that keep the house standing, read from the code: imports point down the layers
and close no cycle, each pass is named after its flag in module and FileCheck file alike, files
stay within their size budget, and unit tests assert no duration.

A known exception is listed with the reason it is still there; the lists must match the code
exactly, so an exception that goes away has to leave its list too (and none can be added
silently).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from _imports import PACKAGE, ROOT, graph, module_name, modules

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("ground", ("irgrad", "irgrad.diagnostics", "irgrad.versions", "irgrad.xdsl_patches", "irgrad.ir_numpy",
                "irgrad.context", "irgrad.registry", "irgrad.pipelines")),
    ("dialects", ("irgrad.dialects",)),
    ("tracing", ("irgrad.tracing",)),
    ("passes", ("irgrad.autodiff", "irgrad.transforms", "irgrad.lowering", "irgrad.analysis")),
    ("backends", ("irgrad.backends",)),
    ("library", ("irgrad.numpy", "irgrad.lax", "irgrad.nn", "irgrad.scipy", "irgrad.frontend", "irgrad.distributed",
                 "irgrad.random", "irgrad.layers", "irgrad.optim", "irgrad.losses", "irgrad.mixed_precision",
                 "irgrad.debug", "irgrad.api")),
    ("tools", ("irgrad.driver",)),
]
"""irgrad's floors, lowest first: a module may import its own floor and those below. The
dialects import no pass, runtime or library; passes import no backend or library; nothing
imports the tools' mains."""

KNOWN_UPWARD: dict[tuple[str, str], str] = {}

BUDGET_LINES = 600
OVER_BUDGET: dict[str, int] = {}
"""Files that still hold more than one concept, at most as long as they are now: each must
shrink, and leaves this table when it fits the budget."""


def layer_of(module: str) -> int:
    best, length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = index, len(prefix)
    assert best is not None, f"{module} stands on no floor of LAYERS: add its package there"
    return best


def test_every_module_stands_on_a_floor():
    for module in modules():
        layer_of(module)


def test_imports_point_down_the_floors():
    upward = {}
    for module, imported in graph().items():
        for target, line in imported:
            if layer_of(target) > layer_of(module):
                upward[(module, target)] = (
                    f"{module}:{line} imports {target} "
                    f"({LAYERS[layer_of(module)][0]} -> {LAYERS[layer_of(target)][0]})"
                )
    unexpected = [text for pair, text in sorted(upward.items()) if pair not in KNOWN_UPWARD]
    assert not unexpected, "imports up the floors:\n" + "\n".join(unexpected)
    gone = sorted(set(KNOWN_UPWARD) - set(upward))
    assert not gone, f"no longer imported, remove from KNOWN_UPWARD: {gone}"


def test_no_module_imports_the_tools():
    for module, imported in graph().items():
        if not module.startswith("irgrad.driver"):
            for target, line in imported:
                assert not target.startswith("irgrad.driver"), f"{module}:{line} imports {target}"


def _cycles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_even_through_imports_inside_functions():
    cycles = _cycles(graph())
    assert not cycles, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1)], "d": [("a", 1)]}) == [["a", "b", "c"]]


def _registered_passes() -> dict[str, str]:
    from irgrad import registry

    found = {}
    for flag, factory in registry.irgrad_passes().items():
        found[flag] = factory().__module__
    return found


def test_each_pass_module_is_named_after_its_flag():
    """`convert-x-to-y` lives in `x_to_y.py` (or a package `x_to_y/`), any other flag `f-g` in `f_g.py`."""
    wrong = []
    for flag, module in _registered_passes().items():
        expected = flag.removeprefix("convert-").replace("-", "_")
        if module.rpartition(".")[2] != expected:
            wrong.append(f"{flag}: {module} (expected a module named {expected})")
    assert not wrong, "\n".join(wrong)


def test_each_pass_has_a_filecheck_file_named_after_it_in_the_mirrored_folder():
    """irgrad/lowering/llvm/arith_to_llvm.py <-> tests/filecheck/lowering/llvm/convert-arith-to-llvm.mlir."""
    known = modules()
    missing = []
    for flag, module in _registered_passes().items():
        path = known[module]
        relative = path.parent.relative_to(PACKAGE)
        test = ROOT / "tests" / "filecheck" / relative / f"{flag}.mlir"
        if not test.exists():
            missing.append(f"{flag} ({path.relative_to(ROOT)}): no {test.relative_to(ROOT)}")
    assert not missing, "\n".join(missing)


def test_pass_folders_hold_only_tests_of_their_passes():
    """Every FileCheck file in a pass folder starts with the flag of a pass of the mirrored
    package (`autodiff-batch.mlir` tests `autodiff`), so a test moves with its pass."""
    flags_by_folder: dict[Path, set[str]] = {}
    known = modules()
    for flag, module in _registered_passes().items():
        path = known[module]
        folder = path.parent.relative_to(PACKAGE)
        flags_by_folder.setdefault(folder, set()).add(flag)
    strays = []
    for folder, flags in flags_by_folder.items():
        for test in sorted((ROOT / "tests" / "filecheck" / folder).glob("*.mlir")):
            if not any(test.stem == flag or test.stem.startswith(flag + "-") for flag in flags):
                strays.append(str(test.relative_to(ROOT)))
    assert not strays, "FileCheck files of no pass in this folder: " + ", ".join(strays)


def _line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_files_stay_within_their_size_budget():
    over = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        lines = _line_count(path)
        cap = OVER_BUDGET.get(relative, BUDGET_LINES)
        if lines > cap:
            over[relative] = f"{relative}: {lines} lines, budget {cap}"
    assert not over, "files past their budget (split them by concept):\n" + "\n".join(over.values())
    fitting = [name for name in OVER_BUDGET if _line_count(ROOT / name) <= BUDGET_LINES]
    assert not fitting, f"within {BUDGET_LINES} lines now, remove from OVER_BUDGET: {fitting}"


DOCSTRING_LINES = 22
LONG_DOCSTRINGS: dict[str, int] = {}
"""Module docstrings still longer than a summary (their detail belongs in docs/design/)."""


def test_module_docstrings_are_summaries():
    """What the module is, where it sits and why, in about 20 lines; the rest in docs/."""
    long = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        doc = ast.get_docstring(ast.parse(path.read_text()), clean=False)
        lines = 0 if doc is None else doc.count("\n") + 1
        if lines > LONG_DOCSTRINGS.get(relative, DOCSTRING_LINES):
            long[relative] = f"{relative}: a {lines}-line module docstring"
    assert not long, "\n".join(long.values())
    fitting = [name for name, _ in LONG_DOCSTRINGS.items()
               if (doc := ast.get_docstring(ast.parse((ROOT / name).read_text()), clean=False)) is None
               or doc.count("\n") + 1 <= DOCSTRING_LINES]
    assert not fitting, f"short enough now, remove from LONG_DOCSTRINGS: {fitting}"


_CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "process_time"}


def _is_clock_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _CLOCKS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "time"
    )


def timed_assertions(source: str) -> list[int]:
    """Lines of `assert`s that compare a clock reading or a name assigned from one."""
    tree = ast.parse(source)
    clock_names = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and any(_is_clock_call(n) for n in ast.walk(node.value))
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            inner = list(ast.walk(node.test))
            if any(_is_clock_call(n) for n in inner) or any(
                isinstance(n, ast.Name) and n.id in clock_names for n in inner
            ):
                lines.append(node.lineno)
    return lines


def test_no_unit_test_asserts_a_duration():
    """Timing goals live in benchmarks/ (make bench), never in tests/unit."""
    found = []
    for path in sorted((ROOT / "tests" / "unit").rglob("*.py")):
        for line in timed_assertions(path.read_text()):
            found.append(f"{path.relative_to(ROOT)}:{line}")
    assert not found, "timed assertions: " + ", ".join(found)


@pytest.mark.parametrize(
    "source, lines",
    [
        ("import time\nstart = time.perf_counter()\nassert time.perf_counter() - start < 1\n", [3]),
        ("import time\nt0 = time.monotonic()\nx = 1\nassert x < 2\nassert t0 > 0\n", [5]),
        ("x = 1\nassert x == 1\n", []),
    ],
)
def test_the_timed_assertion_finder(source, lines):
    assert timed_assertions(source) == lines


def test_module_names_match_files():
    """The graph's module names are the files' (a sanity check of the reader itself)."""
    assert module_name(PACKAGE / "lowering" / "llvm" / "arith_to_llvm.py") == "irgrad.lowering.llvm.arith_to_llvm"
    assert module_name(PACKAGE / "dialects" / "nn" / "__init__.py") == "irgrad.dialects.nn"
    assert ("irgrad.dialects.nn", 1) not in graph()["irgrad.tracing.primitives"]
    assert any(target == "irgrad.dialects.nn" for target, _ in graph()["irgrad.tracing.primitives"])

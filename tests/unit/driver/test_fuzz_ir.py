"""Fuzzing irgrad-opt: mutants of the repo's own .mlir files, through the parser, the verifiers
and the passes their RUN lines name (and the whole CPU pipeline for `nn`-level files).

Every answer must be exit 0, or exit 1 with a diagnostic at `file:line:col`; an internal error
(exit 2), an escaped exception or no answer at all is a failure. Hypothesis draws a seed chunk
(a `// -----` piece of a file under tests/filecheck), one to four mutations of it (a range
deleted, duplicated or cut off, a token of MLIR's punctuation or an extreme literal inserted,
a number replaced by 0, -1, 2^32 or 2^64, two identifiers or two lines swapped) and a pipeline.
Derandomized, so a run is reproducible and a failure shrinks to a small input; more examples
with IRGRAD_FUZZ_EXAMPLES=N. Each answer is bounded by a liveness alarm (a hang fails the
example; nothing is timed). The cases it found are lit tests (tools/malformed-literals.mlir
and the passes' own files).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irgrad.driver import opt

FILECHECK = Path(__file__).resolve().parents[2] / "filecheck"
EXAMPLES = int(os.environ.get("IRGRAD_FUZZ_EXAMPLES", "600"))
LIVENESS_SECONDS = 120
"""An answer later than this is a hang (the slowest pipeline on the largest seed takes ~1 s)."""
CPU_PIPELINE_AREAS = ("dialects/nn", "autodiff", "nn_to_linalg", "pipelines")
TOKENS = [
    "{", "}", "(", ")", "[", "]", "<", ">", "%", "^", ":", ",", "=", '"', "0x", "-", "1e999",
    "99999999999999999999", "i128", "i0", "f64", "index", "tensor<", "memref<", "?x", "x",
    "dense<", "array<", "\x00", "é", "\\", "#", "!", "@", "->", "//", "\n", " ", "0", "-1", "nan",
]
NUMBERS = ["0", "1", "-1", "3", "65536", "4294967296", "18446744073709551616"]


class NoAnswer(Exception):
    """The liveness alarm fired."""


def run_opt(argv: list[str]) -> tuple[object, str]:
    """irgrad-opt's exit code (or what escaped it) and its stderr, in this process."""
    err = io.StringIO()

    def alarm(*_: object) -> None:
        raise NoAnswer

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(LIVENESS_SECONDS)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code: object = opt.main(argv)
            except SystemExit as exit_:
                code = exit_.code
    except NoAnswer:
        code = f"no answer within {LIVENESS_SECONDS} s"
    except BaseException as escaped:  # noqa: BLE001 - any escape is the finding
        code = f"escaped {type(escaped).__name__}: {escaped}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


def _pipelines(path: Path, text: str) -> list[str]:
    found = set()
    for line in text.splitlines():
        if "RUN:" in line and "irgrad-opt" in line:
            match = re.search(r"-p[ =]+('[^']*'|\"[^\"]*\"|\S+)", line)
            if match:
                found.add(match.group(1).strip("'\""))
    if any(area in path.as_posix() for area in CPU_PIPELINE_AREAS):
        found.add("irgrad-cpu")
    return sorted(found)


@cache
def seeds() -> list[tuple[str, str, tuple[str, ...]]]:
    """(file, chunk, pipelines that accept an empty module): a pipeline a RUN line gives to
    test a bad option is a command-line error, not the input's."""
    empty = Path(tempfile.mkdtemp(prefix="irgrad-fuzz-")) / "empty.mlir"
    empty.write_text("")
    accepted: dict[str, bool] = {}
    out = []
    for path in sorted(FILECHECK.rglob("*.mlir")):
        text = path.read_text(encoding="utf-8", errors="replace")
        pipelines = _pipelines(path, text)
        for pipeline in pipelines:
            if pipeline not in accepted:
                accepted[pipeline] = run_opt([str(empty), "-p", pipeline])[0] == 0
        usable = tuple(p for p in pipelines if accepted[p])
        for chunk in text.split("// -----"):
            out.append((path.relative_to(FILECHECK).as_posix(), chunk, usable))
    return out


def mutate(text: str, mutation: tuple[int, float, int, int]) -> str:
    kind, where, length, pick = mutation
    i = int(where * len(text))
    j = min(len(text), i + length)
    if kind == 0:
        return text[:i] + text[j:]
    if kind == 1:
        return text[:i] + TOKENS[pick % len(TOKENS)] + text[i:]
    if kind == 2:
        return text[:i]
    if kind == 3:
        return text[:j] + text[i:j] + text[j:]
    if kind == 4:
        numbers = list(re.finditer(r"\d+", text))
        if not numbers:
            return text
        m = numbers[int(where * len(numbers))]
        return text[: m.start()] + NUMBERS[pick % len(NUMBERS)] + text[m.end():]
    if kind == 5:
        words = list(re.finditer(r"[a-z_][a-z_0-9.]*", text))
        if len(words) < 2:
            return text
        spans = sorted({words[int(where * len(words))].span(), words[pick % len(words)].span()})
        if len(spans) < 2:
            return text
        a, b = spans
        return text[: a[0]] + text[b[0]:b[1]] + text[a[1]: b[0]] + text[a[0]:a[1]] + text[b[1]:]
    lines = text.split("\n")
    a, b = int(where * len(lines)), pick % len(lines)
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


mutations = st.lists(
    st.tuples(st.integers(0, 6), st.floats(0, 1, exclude_max=True), st.integers(0, 40), st.integers(0, 10**6)),
    min_size=1,
    max_size=4,
)


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="irgrad-fuzz-") as folder:
        yield Path(folder)


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**9), steps=mutations, pick=st.integers(0, 10**6), with_pipeline=st.booleans())
def test_every_mutant_gets_a_located_answer(workdir, seed, steps, pick, with_pipeline):
    name, chunk, pipelines = seeds()[seed % len(seeds())]
    text = chunk
    for step in steps:
        text = mutate(text, step)
    path = workdir / "mutant.mlir"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    argv = [str(path)]
    if with_pipeline and pipelines:
        argv += ["-p", pipelines[pick % len(pipelines)]]
    code, stderr = run_opt(argv)
    context = f"seed {name}, irgrad-opt {' '.join(argv[1:])}, input:\n{text}\nstderr:\n{stderr}"
    assert code in (0, 1), context
    if code == 1:
        assert re.search(re.escape(str(path)) + r":\d+:\d+: error", stderr), context
    assert "Traceback" not in stderr, context


def test_the_seeds_cover_the_repo_files():
    """The fuzz reads every lit file, and most pipelines of their RUN lines are usable."""
    files = {name for name, _, _ in seeds()}
    assert len(files) == len(list(FILECHECK.rglob("*.mlir")))
    pipelines = {p for _, _, ps in seeds() for p in ps}
    assert "irgrad-cpu" in pipelines and "convert-to-llvm" in pipelines and len(pipelines) > 40


@pytest.mark.parametrize("kind", range(7))
def test_each_mutation_changes_or_keeps_text_as_described(kind):
    text = "func.func @f(%a: tensor<4xf32>) {\n  func.return\n}\n"
    mutated = mutate(text, (kind, 0.5, 5, 3))
    if kind in (0, 2):
        assert len(mutated) < len(text)
    elif kind in (1, 3):
        assert len(mutated) > len(text)
    elif kind == 4:
        assert mutated == text.replace("f32", "f3")  # the second number, 32, is now 3
    else:
        assert sorted(mutated) == sorted(text)

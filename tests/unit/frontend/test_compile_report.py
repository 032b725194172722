"""The HTML compile report (irgrad/frontend/compile_report.py, ig.jit(report=))."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

import irgrad as ig
from irgrad.frontend.compile_report import op_counts, render_report
from irgrad.frontend.stages import STAGE_NAMES


class _Page(HTMLParser):
    """Stage sections, diff blocks, script tags and every attribute value of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.stages: list[str] = []
        self.diffs = 0
        self.scripts: list[dict[str, str | None]] = []
        self.values: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.values += [v for v in a.values() if v]
        if tag == "section" and "stage" in (a.get("class") or ""):
            self.stages.append(a["data-stage"] or "")
        if tag == "details" and "diff" in (a.get("class") or ""):
            self.diffs += 1
        if tag == "script":
            self.scripts.append(a)


def _parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def test_render_report_structure():
    stages = {"a": 'func.func @f() {\n  %0 = arith.constant 1.0 : f32\n}', "b": "func.func @f() {\n  <x&y>\n}"}
    page = render_report("t", stages, {"a": 0.001, "b": 0.002}, cache="miss: compiled")
    parsed = _parse(page)
    assert parsed.stages == ["a", "b"]
    assert parsed.diffs == 1  # the first stage has nothing to diff against
    assert '<span class="del">-  %0 = arith.constant 1.0 : f32</span>' in page
    assert "&lt;x&amp;y&gt;" in page and "<x&y>" not in page  # IR text is escaped
    assert all("src" not in s for s in parsed.scripts)
    assert "cache: miss: compiled" in page


def test_op_counts():
    counts = op_counts('%0 = arith.addf %a, %b : f32\n  "test.op"() : () -> ()\n  %1 = arith.addf %0, %0 : f32\n')
    assert counts == {"arith.addf": 2, "test.op": 1}


def test_dot_shown_when_no_svg():
    page = render_report("t", {"nn": "x"}, pictures={"nn": "digraph g { a -> b }"})
    assert "graphviz not installed" in page and "digraph g { a -&gt; b }" in page


def _f(x, y):
    return ig.sum(ig.tanh(x) * y)


def test_jit_report_miss_then_hit(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path / "cache"))
    x, y = np.linspace(-1, 1, 6).astype(np.float32), np.ones(6, np.float32)
    path = tmp_path / "report.html"
    f = ig.jit(ig.grad(_f), report=str(path))
    np.testing.assert_allclose(f(x, y), 1 - np.tanh(x) ** 2, rtol=1e-5)
    page = path.read_text()
    parsed = _parse(page)
    assert parsed.stages == list(STAGE_NAMES)
    assert parsed.diffs == len(STAGE_NAMES) - 1
    assert "cache: miss" in page and "codegen" in page
    # The only URLs are SVG's XML namespace names, which a browser never fetches.
    urls = re.findall(r"https?://[^\s\"'<>]+", page)
    assert all(u.startswith("http://www.w3.org/") for u in urls), urls
    assert all("src" not in s for s in parsed.scripts)
    assert ("<svg" in page) or ("graphviz not installed" in page)
    # A fresh jit of the same function: the disk cache answers, and the page says so.
    path.unlink()
    g = ig.jit(ig.grad(_f), report=str(path))
    np.testing.assert_allclose(g(x, y), 1 - np.tanh(x) ** 2, rtol=1e-5)
    page = path.read_text()
    assert "cache: hit" in page and _parse(page).stages == ["nn"]
    assert "only the traced IR" in page


def test_jit_report_of_every_pass(tmp_path, monkeypatch):
    """report_passes=True: a tab per pass of the CPU pipeline, in order, each with its time and
    a diff to the pass before; the passes run even when the disk cache holds the program."""
    from irgrad.pipelines import CPU_STEPS
    from irgrad.registry import expand_pipeline_spec

    monkeypatch.setenv("IRGRAD_CACHE_DIR", str(tmp_path / "cache"))
    x, y = np.linspace(-1, 1, 6).astype(np.float32), np.ones(6, np.float32)
    ig.jit(ig.grad(_f))(x, y)  # now the disk cache holds it
    path = tmp_path / "passes.html"
    f = ig.jit(ig.grad(_f), report=str(path), report_passes=True)
    np.testing.assert_allclose(f(x, y), 1 - np.tanh(x) ** 2, rtol=1e-5)
    page = path.read_text()
    expected = [
        f"{stage}/{k:02d} {p.name}"
        for stage, spec in CPU_STEPS
        for k, p in enumerate(expand_pipeline_spec(spec), start=1)
    ]
    parsed = _parse(page)
    assert parsed.stages == ["nn", *expected, "llvm-ir"]
    assert parsed.diffs == len(expected) + 1 and "cache: miss" in page
    assert "convert-nn-to-linalg" in page and "linalg.generic" in page
    assert all(f"<td>{label}</td><td>" in page for label in expected)  # a time for each pass
    with pytest.raises(ValueError, match="report_passes=True needs report="):
        ig.jit(_f, report_passes=True)


def test_jit_report_bad_path(tmp_path, monkeypatch):
    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    f = ig.jit(_f, report=str(tmp_path / "no" / "such" / "dir" / "r.html"))
    with pytest.raises(OSError, match="report: cannot write .*r.html"):
        f(np.ones(3, np.float32), np.ones(3, np.float32))


_OPT_INPUT = """func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.muli %0, %0 : i32
  %2 = arith.muli %0, %0 : i32
  %3 = arith.addi %1, %2 : i32
  func.return %3 : i32
}
"""


def _opt(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    (cwd / "in.mlir").write_text(_OPT_INPUT)
    command = [sys.executable, "-m", "irgrad.driver.opt", *args, str(cwd / "in.mlir")]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_opt_report(tmp_path):
    path = tmp_path / "r.html"
    run = _opt("-p", "canonicalize,cse", "--report", str(path), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    page = path.read_text()
    assert _parse(page).stages == ["input", "canonicalize", "cse"]
    # canonicalize folds the `+ 0`; cse then drops one of the two equal multiplications.
    assert '<span class="del">-    %0 = arith.addi %a, %c0 : i32</span>' in page
    assert '<span class="del">-    %1 = arith.muli %a, %a : i32</span>' in page


def test_opt_report_bad_path(tmp_path):
    run = _opt("-p", "cse", "--report", str(tmp_path / "missing" / "r.html"), cwd=tmp_path)
    assert run.returncode == 1
    assert "--report" in run.stderr and "does not exist" in run.stderr and "Traceback" not in run.stderr

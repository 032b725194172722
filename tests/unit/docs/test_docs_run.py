"""Every code block of README.md and docs/ runs as written.

Python blocks of one file run in sequence in one fresh process, sharing state as a reader
running them would (each block's outcome is its own test, named file:line). Shell blocks
(```sh, ```bash, ```console) run line by line with the repository's .venv/bin first on PATH, in
a temporary folder that links the repository's examples/, tools/, benchmarks/ and docs/, so
whatever they write lands there. In a ```console block, the lines after a `$ command` are its
expected output, compared exactly. A block that names a source file in its first line
(`# irgrad/autodiff/rules/elementwise.py`, or `// examples/mlp.mlir` in an ```mlir block) is an
excerpt: it must appear in that file verbatim.

A block that cannot run here by nature (a GPU, `make bench`, many MPI ranks, long training)
carries a visible marker right before it, `<!-- docs-test: skip (needs a GPU) -->`; the skips are
reported with their reason, and nothing else is skipped.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BIN = ROOT / ".venv" / "bin"
LANGUAGES = {"python": "python", "sh": "shell", "bash": "shell", "console": "shell"}
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->")
EXCERPT = re.compile(r"(#|//)\s*(?P<path>(irgrad|tests|tools|benchmarks|examples)/[\w/.-]+\.(py|mlir))\s*$")
LINKED = ("examples", "tools", "benchmarks", "docs", "irgrad", "tests")
TIMEOUT_S = 240


@dataclass(frozen=True)
class Block:
    file: str  # relative to the repository
    line: int  # of the opening fence
    language: str  # "python" or "shell"
    console: bool
    code: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    blocks, k = [], 0
    while k < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[k])
        if not fence:
            k += 1
            continue
        start, end = k, k + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        language = LANGUAGES.get(fence.group(1))
        if fence.group(1) == "mlir" and end > start + 1 and EXCERPT.match(lines[start + 1]):
            language = "mlir"  # an excerpt of a shipped IR file: checked against it
        if language is not None:
            before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
            marker = SKIP.search(before)
            blocks.append(Block(str(path.relative_to(ROOT)), start + 1, language, fence.group(1) == "console",
                                "\n".join(lines[start + 1:end]), marker.group("reason") if marker else None))
        k = end + 1
    return blocks


ALL_BLOCKS = [b for doc in _documents() for b in _blocks(doc)]


def _workdir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="irgrad-docs-"))
    for name in LINKED:
        (folder / name).symlink_to(ROOT / name)
    (folder / ".venv").symlink_to(ROOT / ".venv")
    return folder


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("IRGRAD_NUM_THREADS", "2")
    return env


_RUNNER = r'''
import json, sys, traceback
blocks = json.load(open(sys.argv[1]))
scope = {"__name__": "__main__"}
results = []
for where, code in blocks:
    try:
        exec(compile(code, where, "exec"), scope)
        results.append(None)
    except BaseException:
        results.append(traceback.format_exc(limit=6))
    sys.stdout.flush()
print("@@RESULTS@@" + json.dumps(results))
'''


@functools.cache
def _python_results(file: str) -> dict[int, str | None]:
    """Run the file's Python blocks (not excerpts, not skipped) in order in one process."""
    blocks = [b for b in ALL_BLOCKS if b.file == file and b.language == "python" and b.skip is None
              and not _excerpt_path(b)]
    folder = _workdir()
    (folder / "_blocks.json").write_text(json.dumps([[b.where, b.code] for b in blocks]))
    (folder / "_runner.py").write_text(_RUNNER)
    try:
        done = subprocess.run([str(BIN / "python"), "_runner.py", "_blocks.json"], cwd=folder, env=_environment(),
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    marker = done.stdout.rfind("@@RESULTS@@")
    if marker < 0:
        failure = f"the process died (exit {done.returncode}):\n{done.stderr[-3000:]}"
        return {b.line: failure for b in blocks}
    results = json.loads(done.stdout[marker + len("@@RESULTS@@"):])
    return {b.line: r for b, r in zip(blocks, results)}


def _excerpt_path(block: Block) -> str | None:
    first = block.code.splitlines()[0] if block.code else ""
    found = EXCERPT.match(first)
    return found.group("path") if found else None


def _shell_commands(block: Block) -> list[tuple[str, list[str] | None]]:
    """(command, expected output lines or None) per command of a shell block."""
    commands: list[tuple[str, list[str] | None]] = []
    for raw in block.code.splitlines():
        if block.console:
            if raw.startswith("$ "):
                commands.append((raw[2:], []))
            elif commands:
                commands[-1][1].append(raw)
        elif raw.strip() and not raw.lstrip().startswith("#"):
            commands.append((raw, None))
    return commands


def _run_shell(block: Block) -> None:
    folder = _workdir()
    try:
        _run_commands(block, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run_commands(block: Block, folder: Path) -> None:
    for command, expected in _shell_commands(block):
        done = subprocess.run(["bash", "-c", command], cwd=folder, env=_environment(), capture_output=True,
                              text=True, timeout=TIMEOUT_S)
        if expected is None:
            assert done.returncode == 0, f"{block.where}: `{command}` exited {done.returncode}:\n{done.stderr[-3000:]}"
        else:
            shown = (done.stdout + done.stderr).rstrip("\n").splitlines()
            want = [line for line in expected]
            while want and not want[-1].strip():
                want.pop()
            assert shown == want, f"{block.where}: `{command}` printed:\n" + "\n".join(shown)


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.where for b in ALL_BLOCKS])
def test_block_runs(block: Block):
    if block.skip is not None:
        pytest.skip(f"{block.where}: marked docs-test: skip ({block.skip})")
    excerpt = _excerpt_path(block)
    if excerpt is not None:
        source = (ROOT / excerpt).read_text()
        body = "\n".join(block.code.splitlines()[1:]).strip("\n")
        assert body in source, f"{block.where}: the excerpt is no longer in {excerpt}"
    elif block.language == "python":
        failure = _python_results(block.file)[block.line]
        if failure is not None and "GraphvizNotFoundError" in failure and shutil.which("dot") is None:
            # `make test` installs graphviz where apt can; elsewhere the SVG-drawing blocks say so.
            pytest.skip(f"{block.where}: draws SVG with graphviz's `dot`, which is not installed")
        assert failure is None, f"{block.where}: the block raised:\n{failure}"
    else:
        _run_shell(block)


def test_blocks_found():
    """The extraction sees the README's blocks (a broken fence parser would pass vacuously)."""
    readme = [b for b in ALL_BLOCKS if b.file == "README.md"]
    assert {b.language for b in readme} == {"python", "shell", "mlir"}
    skipped = [f"{b.where} ({b.skip})" for b in ALL_BLOCKS if b.skip]
    print(f"{len(ALL_BLOCKS)} blocks, {len(skipped)} marked skip: " + "; ".join(skipped))

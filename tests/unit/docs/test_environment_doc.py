"""docs/environment.md's table of IRGRAD_* variables agrees with the code.

Every variable named in irgrad/, tools/, benchmarks/ or tests/ has a row, and every row names
a variable that code reads; a new variable without a row fails here, naming it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
VARIABLE = re.compile(r"IRGRAD_[A-Z0-9_]+")
SOURCES = ("irgrad", "tools", "benchmarks", "tests")
SUFFIXES = {".py", ".sh", ".ll", ".toml", ".cfg"}
THIS = Path(__file__).resolve()


def _in_code() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for top in SOURCES:
        for path in (ROOT / top).rglob("*"):
            if path.suffix not in SUFFIXES or not path.is_file() or path.resolve() == THIS:
                continue
            for name in VARIABLE.findall(path.read_text(errors="replace")):
                found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def _in_table() -> set[str]:
    rows = [line for line in (ROOT / "docs/environment.md").read_text().splitlines() if line.startswith("| `IRGRAD_")]
    return {VARIABLE.match(row[3:]).group(0) for row in rows}


def test_every_variable_in_code_has_a_row():
    missing = sorted(set(_in_code()) - _in_table())
    assert not missing, "IRGRAD_* variables read in the code but missing from docs/environment.md: " + ", ".join(
        f"{name} ({', '.join(sorted(_in_code()[name]))})" for name in missing)


def test_every_row_is_read_by_code():
    stale = sorted(_in_table() - set(_in_code()))
    assert not stale, f"docs/environment.md documents variables no code reads: {stale}"


def test_readme_links_the_table():
    assert "docs/environment.md" in (ROOT / "README.md").read_text()

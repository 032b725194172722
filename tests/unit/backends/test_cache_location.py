"""Where the on-disk compile cache lives (irgrad/backends/cache.py), seen from a new process.

`$IRGRAD_CACHE_DIR` wins; otherwise `$XDG_CACHE_HOME/irgrad`, and with XDG_CACHE_HOME unset
(or empty) `~/.cache/irgrad`; `IRGRAD_CACHE_DIR=off` writes nothing anywhere. Each case runs
`ig.jit` in a subprocess whose HOME and XDG_CACHE_HOME are temporary folders, so the real
cache is never touched, and then looks at which folder got an entry.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import numpy as np
import irgrad as ig
from irgrad.backends.cache import cache_dir

print(cache_dir())
f = ig.jit(lambda x: x * 3.0 - 1.0, backend="cpu")
y = f(np.arange(4, dtype=np.float32))
assert np.allclose(y, np.arange(4) * 3.0 - 1.0), y
"""


def run_jit(tmp_path: Path, **env: str | None) -> tuple[Path, Path, str]:
    """Run SCRIPT with a temporary HOME and XDG_CACHE_HOME (None: unset); return both
    folders and what the process printed (its cache_dir())."""
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    home.mkdir()
    xdg.mkdir()
    environ = dict(os.environ)
    environ.pop("IRGRAD_CACHE_DIR", None)
    environ["HOME"] = str(home)
    environ["XDG_CACHE_HOME"] = str(xdg)
    for name, value in env.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    return home, xdg, result.stdout.strip()


def entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".tmp-"))


def test_xdg_cache_home_is_used_when_set(tmp_path):
    home, xdg, printed = run_jit(tmp_path)
    assert Path(printed) == xdg / "irgrad"
    assert entries(xdg / "irgrad"), "no cache entry under $XDG_CACHE_HOME/irgrad"
    assert not (home / ".cache" / "irgrad").exists()


@pytest.mark.parametrize("xdg_value", [None, ""], ids=["unset", "empty"])
def test_home_cache_is_the_fallback(tmp_path, xdg_value):
    home, xdg, printed = run_jit(tmp_path, XDG_CACHE_HOME=xdg_value)
    assert Path(printed) == home / ".cache" / "irgrad"
    assert entries(home / ".cache" / "irgrad"), "no cache entry under ~/.cache/irgrad"
    assert not any(xdg.iterdir())


def test_irgrad_cache_dir_off_disables_the_cache(tmp_path):
    home, xdg, printed = run_jit(tmp_path, IRGRAD_CACHE_DIR="off")
    assert printed == "None"
    assert not any(xdg.iterdir())
    assert not (home / ".cache" / "irgrad").exists()


def test_irgrad_cache_dir_wins_over_xdg(tmp_path):
    folder = tmp_path / "explicit"
    home, xdg, printed = run_jit(tmp_path, IRGRAD_CACHE_DIR=str(folder))
    assert Path(printed) == folder
    assert entries(folder)
    assert not any(xdg.iterdir())
    assert not (home / ".cache" / "irgrad").exists()

"""The compile report in a real browser: headless Chromium (Debian's `chromium`) loads the page
from disk, the inline script shows the stage that `#stage=NAME` names and hides the others,
records no script error, and a screenshot of it is a real picture.

Skipped, saying so, only where `chromium` is not on PATH (`apt-get install -y chromium`)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from irgrad.frontend.compile_report import render_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")

_STAGES = {
    "nn": "func.func @f(%x: tensor<4xf32>) {\n  %0 = nn.tanh %x : tensor<4xf32>\n}",
    "linalg": "func.func @f(%x: tensor<4xf32>) {\n  %0 = linalg.generic ...\n}",
    "loops": "func.func @f(%x: memref<4xf32>) {\n  scf.for %i = %c0 to %c4 step %c1 {\n  }\n}",
}


def _chromium(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    command = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
               *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def _page(tmp_path: Path) -> Path:
    path = tmp_path / "report.html"
    path.write_text(render_report("browser test", _STAGES, {"nn": 0.001, "loops": 0.002}, cache="miss: compiled"))
    return path


def test_stage_from_hash_is_shown_without_errors(tmp_path):
    url = _page(tmp_path).as_uri() + "#stage=loops"
    run = _chromium("--dump-dom", url, tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    dom = run.stdout
    assert 'data-shown="loops"' in dom, dom[:2000]
    assert '<section class="stage shown" data-stage="loops">' in dom
    for other in ("nn", "linalg"):
        assert f'<section class="stage" data-stage="{other}" hidden="">' in dom
    assert '<button data-stage="loops" class="active">' in dom
    assert '<pre id="errors"></pre>' in dom  # window.onerror wrote nothing
    assert "<title>irgrad report: loops</title>" in dom


def _png_pixels(data: bytes) -> tuple[int, int, bytes]:
    """Width, height and the decompressed scanlines (filter bytes included) of a PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    return width, height, zlib.decompress(idat)


def test_screenshot_is_a_real_picture(tmp_path):
    shot = tmp_path / "shot.png"
    url = _page(tmp_path).as_uri() + "#stage=nn"
    run = _chromium(f"--screenshot={shot}", "--window-size=1200,800", url, tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    width, height, raw = _png_pixels(shot.read_bytes())
    assert (width, height) == (1200, 800)
    # Not one colour: the rows of a blank page are all alike; text and tables make them differ.
    rows = {raw[i : i + len(raw) // height] for i in range(0, len(raw), len(raw) // height)}
    assert len(rows) > 20


def test_jit_report_opens_without_errors(tmp_path, monkeypatch):
    import numpy as np

    import irgrad as ig

    monkeypatch.setenv("IRGRAD_CACHE_DIR", "off")
    path = tmp_path / "jit.html"
    f = ig.jit(ig.grad(lambda x: ig.sum(ig.tanh(x) * x)), report=str(path))
    f(np.linspace(-1, 1, 5).astype(np.float32))
    run = _chromium("--dump-dom", path.as_uri() + "#stage=bufferized", tmp_path=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert 'data-shown="bufferized"' in run.stdout
    assert '<pre id="errors"></pre>' in run.stdout

"""The project's metadata: one version, a license, authors and classifiers.

The version is written once, as `irgrad.__version__`; pyproject.toml reads it through
setuptools' dynamic version, so the installed distribution and the package agree.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import irgrad

ROOT = Path(__file__).resolve().parents[3]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_installed_version_is_the_package_version():
    assert importlib.metadata.version("irgrad") == irgrad.__version__


def test_version_is_written_in_one_place():
    project = _project()
    assert "version" not in project, "pyproject.toml repeats the version; read irgrad.__version__"
    assert "version" in project["dynamic"]
    dynamic = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["dynamic"]
    assert dynamic["version"] == {"attr": "irgrad.__version__"}


def test_license_and_authors():
    project = _project()
    assert project["license"] == "Apache-2.0"
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert project["license-files"] == ["LICENSE"]
    assert project["authors"] == [{"name": "irgrad developers"}]
    assert any(c.startswith("Topic :: Software Development :: Compilers") for c in project["classifiers"])
    # PEP 639: a license expression excludes the License :: classifiers.
    assert not any(c.startswith("License ::") for c in project["classifiers"])

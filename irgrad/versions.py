"""The versions of irgrad's pinned dependencies, read without importing importlib.metadata.

The xDSL patches check the version they were written for (irgrad/xdsl_patches/), and the
compile cache keys every entry on these versions (irgrad/backends/cache.py).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

XDSL_VERSION = "0.75.0"
"""The xDSL release irgrad is written against (pinned in pyproject.toml)."""

LLVMLITE_VERSION = "0.50.0"
"""The llvmlite release irgrad is written against (pinned in pyproject.toml)."""


def installed_version(module: ModuleType) -> str:
    """The version of an installed package, from the name of the `.dist-info` folder beside
    it: what importlib.metadata reads, without the cost of importing it (xDSL's lazy
    `__version__` imports it). Elsewhere (an editable or odd install), the package's own
    `__version__`."""
    package = Path(module.__file__ or "").parent
    found = list(package.parent.glob(f"{package.name}-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len(package.name) + 1 : -len(".dist-info")]
    return str(module.__version__)

"""irgrad: an MLIR-style multi-level IR compiler toolkit for differentiable tensor programs.

The package reads as the pipeline: frontend/ -> dialects/ -> autodiff/ -> lowering/ -> backends/;
driver/ holds the command-line tools (irgrad-opt, irgrad-run).

`import irgrad as ig` gives the Python model-building API: numpy-style array functions that
trace to `nn` IR (or run at once on numpy arrays), JAX-style transforms and control flow.
"""

__version__ = "0.1.0"

import importlib
import importlib.util
import threading as _threading

from irgrad import xdsl_patches

xdsl_patches.apply_all()  # first: before any of irgrad's dialects is defined

# The API (irgrad/api.py) is loaded on first use, not here: the command-line tools import
# this package for its dialects and passes alone, and loading the API would slow every one of
# them (figures: docs/design/cpu-backend.md, "Measured").


_API_LOCK = _threading.RLock()


def _api():
    """irgrad/api.py, imported on the first call (it makes its public names attributes of
    this package as its last step, so later `ig.<name>` lookups do not come here). While it
    is being imported, other threads wait for it (the lock); the importing thread itself (a
    module the API imports doing `from irgrad import tree_map`) is served the partly run
    module, as the package's own namespace did when __init__ imported the API."""
    import sys

    module = sys.modules.get("irgrad.api")
    if module is not None and getattr(module, "_LOADED", False):
        return module
    with _API_LOCK:  # re-entrant: the importing thread passes, the others wait here
        return sys.modules.get("irgrad.api") or importlib.import_module("irgrad.api")


def __getattr__(name: str):
    """`ig.<name>`: a submodule of the package (`from irgrad import registry`, `ig.distributed`)
    is imported alone, without the API; any other name is the API's (loaded on first use, see
    above)."""
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "__all__":  # `from irgrad import *`
        _api()
        return sorted(n for n in globals() if not n.startswith("_") and n not in _PACKAGE_INTERNALS)
    if not name.startswith("_"):
        value = vars(_api()).get(name, _MISSING)
        if value is not _MISSING and value is not _PACKAGE:
            return value
    raise AttributeError(f"module 'irgrad' has no attribute {name!r}")


def __dir__() -> list[str]:
    _api()
    return sorted(globals())


_PACKAGE_INTERNALS = {"api", "versions", "xdsl_patches"}
_MISSING = object()
_PACKAGE = importlib.import_module(__name__)

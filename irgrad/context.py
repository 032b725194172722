"""Which dialects irgrad's tools and pipelines know: xDSL's and irgrad's own, loaded lazily.

A dialect is registered as a name and a factory that imports its module on first use (as
xDSL's `get_all_dialects` does), so a context that knows every dialect costs nothing until a
program uses one. `make_context()` is the context every pass pipeline of irgrad runs in.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.ir import Dialect

if TYPE_CHECKING:
    from xdsl.universe import Universe

from irgrad.diagnostics import IrgradError

DialectFactory = Callable[[], Dialect]

_DIALECTS: dict[str, DialectFactory] = {}


@functools.cache
def xdsl_universe() -> Universe:
    """xDSL's passes and dialects, with those of installed xDSL plug-ins.

    Cached: `Universe.get_multiverse()` reads every installed distribution's entry points
    (slow, each time), and every `run_pipeline` asks for it twice; plug-ins installed
    while the process runs are not seen, as with xDSL's own command-line tools.
    """
    from xdsl.universe import Universe

    return Universe.get_multiverse()


def _lazy_dialect(name: str, module: str, attr: str) -> DialectFactory:
    """A dialect factory whose import failure is a diagnostic, raised only when used."""

    def factory() -> Dialect:
        try:
            return getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as err:
            raise IrgradError(
                f"dialect '{name}' could not be loaded from {module}.{attr}: {err}"
            ) from err

    return factory


def irgrad_dialects() -> dict[str, DialectFactory]:
    """irgrad's own dialects, by name, as lazy factories."""
    return dict(_DIALECTS)


def register_dialects(ctx: Context, *, plugins: bool = True) -> None:
    """Register xDSL's dialects and irgrad's in `ctx`; each loads on first use.

    `plugins=False` leaves out the dialects of xDSL plug-ins (installed distributions with
    an `xdsl.universe` entry point), whose discovery is costly the first time: for IR that
    irgrad builds itself.
    """
    if plugins:
        xdsl_dialects = xdsl_universe().all_dialects
    else:
        from xdsl.dialects import get_all_dialects

        xdsl_dialects = get_all_dialects()
    for name, factory in xdsl_dialects.items():
        if name not in _DIALECTS:
            ctx.register_dialect(name, factory)
    for name, factory in _DIALECTS.items():
        ctx.register_dialect(name, factory)


def make_context(*, allow_unregistered: bool = False, plugins: bool = True) -> Context:
    """A fresh context that knows every dialect `irgrad-opt` knows (see `register_dialects`
    for `plugins`)."""
    ctx = Context(allow_unregistered=allow_unregistered)
    register_dialects(ctx, plugins=plugins)
    return ctx


# irgrad's dialects. One line each; keep the imports lazy.
_DIALECTS["nn"] = _lazy_dialect("nn", "irgrad.dialects.nn", "NN")
_DIALECTS["autodiff"] = _lazy_dialect("autodiff", "irgrad.dialects.autodiff", "Autodiff")
_DIALECTS["blas"] = _lazy_dialect("blas", "irgrad.dialects.blas", "BLAS")
_DIALECTS["index"] = _lazy_dialect("index", "irgrad.dialects.index", "Index")
_DIALECTS["shard"] = _lazy_dialect("shard", "irgrad.dialects.shard", "Shard")
_DIALECTS["debug"] = _lazy_dialect("debug", "irgrad.dialects.debug", "Debug")
_DIALECTS["mpi"] = _lazy_dialect("mpi", "irgrad.dialects.mpi", "MPI")
# Upstream MLIR's dialects, as xDSL's plus the ops xDSL lacks (irgrad/dialects/upstream/).
_DIALECTS["arith"] = _lazy_dialect("arith", "irgrad.dialects.upstream.arith", "Arith")
_DIALECTS["tensor"] = _lazy_dialect("tensor", "irgrad.dialects.upstream.tensor", "Tensor")
_DIALECTS["linalg"] = _lazy_dialect("linalg", "irgrad.dialects.upstream.linalg", "Linalg")
_DIALECTS["llvm"] = _lazy_dialect("llvm", "irgrad.dialects.upstream.llvm", "LLVM")

"""The LLVM IR of irgrad's own CPU runtimes, as `string.Template` text in `.ll` files.

`template("lapack/potrf.ll")` is one file: `${name}` marks a parameter (an element type, an
integer width, an enum value) that the Python module installing the runtime fills in:
blas.py (blas/), lapack/shim_ir.py (lapack/), guard.py (guard.ll), threads.py
(thread_pool.ll). Why files: the IR reads as IR, and the modules keep only the choices.

A file may open with `;` comment lines saying what it holds; they are dropped when it is read,
so the text compiled (and hashed into the disk cache's keys, runtime_objects.py) is the rest,
byte for byte. pyproject.toml ships the files as package data.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def template(name: str) -> Template:
    """The template in `name` (a path under this folder), without its opening comment lines."""
    text = files(__name__).joinpath(name).read_text(encoding="utf-8")
    while text.startswith(";"):
        text = text.partition("\n")[2]
    return Template(text)

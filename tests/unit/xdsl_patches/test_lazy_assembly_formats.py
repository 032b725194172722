"""irgrad/xdsl_patches/lazy_assembly_formats.py: a format compiles on the op's first print."""

from __future__ import annotations

import subprocess
import sys

from irgrad.xdsl_patches.lazy_assembly_formats import compiled_format


def test_a_format_compiles_on_first_use_and_is_kept():
    """In a fresh process: defining the nn dialect compiles no format; printing an op does."""
    code = (
        "import irgrad.dialects.nn as nn\n"
        "from irgrad.xdsl_patches import lazy_assembly_formats as f\n"
        "assert nn.AddOp._irgrad_compile_format.__closure__ is not None\n"
        "program = f.compiled_format(nn.AddOp)\n"
        "assert program is not None and f.compiled_format(nn.AddOp) is program\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_an_op_without_a_format_has_none():
    from xdsl.dialects.builtin import ModuleOp

    assert compiled_format(ModuleOp) is None

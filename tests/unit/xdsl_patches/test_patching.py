"""irgrad/xdsl_patches/__init__.py and patching.py: an xDSL upgrade fails loudly, every patch
applied by a plain `import irgrad` in a fresh process."""

from __future__ import annotations

import subprocess
import sys

import pytest

import irgrad.xdsl_patches as patches
from irgrad.xdsl_patches.patching import XdslChanged, require_source


def test_another_xdsl_release_is_refused(monkeypatch):
    monkeypatch.setattr(patches, "installed_version", lambda module: "0.76.0")
    with pytest.raises(patches.XdslVersionError, match=r"needs xdsl==0\.75\.0.*found 0\.76\.0"):
        patches.check_version()


def test_the_pinned_release_is_accepted():
    patches.check_version()


def test_code_that_moved_is_named():
    def moved():
        return 1

    with pytest.raises(XdslChanged, match=r"moved changed .*review irgrad/xdsl_patches/some_patch\.py"):
        require_source(moved, "no such line", patch="some_patch")


def test_a_plain_import_applies_every_patch():
    """The patches are the package's, not a side effect of whichever module a test imports first."""
    code = (
        "import irgrad\n"
        "import xdsl.irdl\n"
        "from xdsl.dialects.builtin import DenseArrayBase\n"
        "from xdsl.ir import Block\n"
        "from xdsl.parser.attribute_parser import AttrParser\n"
        "from xdsl.irdl import operations\n"
        "from irgrad.xdsl_patches.patching import is_patched\n"
        "from irgrad.xdsl_patches.lazy_assembly_formats import _lazy_accessors\n"
        "assert is_patched(Block.split_before)\n"
        "assert is_patched(DenseArrayBase.get_values)\n"
        "assert is_patched(xdsl.irdl.irdl_to_attr_constraint)\n"
        "assert is_patched(AttrParser._TensorLiteralElement.to_type)\n"
        "assert operations.get_accessors_from_op_def is _lazy_accessors\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr

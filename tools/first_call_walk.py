"""Walk the first call of `ig.jit(ig.grad(f))` through the house: which of irgrad's modules it
imports, and how often control passes from one layer (a folder under irgrad/) to another.

    .venv/bin/python tools/first_call_walk.py [--calls]

A layer is the first folder under `irgrad/` (`frontend`, `autodiff`, `lowering`, ...; a module
directly in `irgrad/` is its own layer). A switch is a call into irgrad whose nearest irgrad
caller on the stack (through xDSL's frames) stands in another layer. `--calls` also prints the
switches by (caller, callee) layer.
"""

from __future__ import annotations

import collections
import os
import sys

os.environ.setdefault("IRGRAD_CACHE_DIR", "off")


def _layer(filename: str) -> str | None:
    marker = os.sep + "irgrad" + os.sep
    if marker not in filename or "site-packages" in filename and "irgrad" not in filename:
        return None
    rest = filename.split(marker, 1)[1]
    head = rest.split(os.sep, 1)[0]
    return head.removesuffix(".py")


def main() -> None:
    import numpy as np

    before = set(sys.modules)
    import irgrad as ig

    def f(w, x):
        return ig.mean(ig.tanh(x @ w) ** 2)

    w = np.ones((3, 2), np.float32)
    x = np.ones((4, 3), np.float32)
    switches: collections.Counter[tuple[str, str]] = collections.Counter()

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = _layer(frame.f_code.co_filename)
        if callee is None:
            return
        caller, up = None, frame.f_back
        while up is not None and caller is None:  # the nearest irgrad frame, through xDSL's
            caller, up = _layer(up.f_code.co_filename), up.f_back
        if callee and caller and callee != caller:
            switches[(caller, callee)] += 1

    step = ig.jit(ig.grad(f))
    sys.setprofile(profile)
    step(w, x)
    sys.setprofile(None)
    imported = sorted(m for m in set(sys.modules) - before if m.startswith("irgrad"))
    layers = collections.Counter(m.split(".")[1] if "." in m else "irgrad" for m in imported)
    print(f"irgrad modules imported by import + first call: {len(imported)}")
    print("  by layer: " + ", ".join(f"{k} {v}" for k, v in sorted(layers.items())))
    print(f"switches between layers: {sum(switches.values())} calls over {len(switches)} layer pairs")
    if "--calls" in sys.argv:
        for (a, b), n in switches.most_common():
            print(f"  {a} -> {b}: {n}")


if __name__ == "__main__":
    main()

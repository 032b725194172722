"""A compiled function that is dropped leaves none of its IR behind.

The llvm lowering memoizes per function (its hoisted constants), per module (its C function
declarations) and per value (its cast to the llvm type). Those memos were global
WeakKeyDictionaries whose values point back at their keys (a constant's result at its
function), so every module ever lowered stayed alive: about 1,100 objects per compile in a
process that jits new functions in a loop. The memos now live on the IR objects themselves.
Run in a fresh process, so that nothing another test keeps alive is counted.
"""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc, os
os.environ["IRGRAD_CACHE_DIR"] = "off"
import numpy as np
import irgrad as ig
from xdsl.dialects import llvm
from xdsl.ir import Operation

x = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)

def alive():
    gc.collect()
    return sum(isinstance(o, Operation) and o.name.startswith("llvm.") for o in gc.get_objects())

for k in range(6):
    value = ig.jit(lambda a: ig.tanh(a @ a * float(k) + 1.0).sum(), backend="cpu")(x)
    assert np.isfinite(value)
print(alive())
"""


def test_dropped_functions_leave_no_llvm_ops_behind():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0", done.stdout

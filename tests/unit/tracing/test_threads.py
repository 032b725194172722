"""Tracing and first use from many threads at once: each thread has its own trace stack (as
JAX keeps its trace state thread-local), and the API's lazy loading makes other threads wait
for it instead of serving them a half-imported module. Both failed before: concurrent first
`ig.jit` calls mixed their ops ("an operation already attached to a block"), and the first
`ig.jit` of several threads raised "module 'irgrad' has no attribute 'jit'"."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

import irgrad as ig
from _thread_util import run_together

WORKERS = 8


def test_threads_trace_and_differentiate_at_once():
    def work(k: int) -> None:
        f = ig.jit(lambda x: ig.tanh(x) * k + ig.sum(x))  # a new function: a first trace per thread
        for _ in range(10):
            x = np.full(4, float(k))
            np.testing.assert_allclose(f(x), np.tanh(x) * k + x.sum())
        g = ig.grad(lambda x: ig.sum(x**2) * k)
        np.testing.assert_allclose(g(np.ones(3)), 2.0 * k * np.ones(3))

    assert run_together(work, WORKERS) == []


def test_the_first_use_of_the_api_from_many_threads_in_a_fresh_process():
    script = textwrap.dedent(f"""
        import threading
        import numpy as np
        import irgrad as ig  # the API is not loaded yet: the threads race for it
        errors = []
        barrier = threading.Barrier({WORKERS})
        def main(k):
            try:
                barrier.wait()
                assert float(ig.jit(lambda x: ig.sum(x) * k)(np.ones(3))) == 3.0 * k
            except Exception as err:
                errors.append(repr(err))
        threads = [threading.Thread(target=main, args=(k,)) for k in range({WORKERS})]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print(errors)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout

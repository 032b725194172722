"""Run a function in several threads released together; collect what they raise."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_together(work: Callable[[int], None], workers: int = 8, timeout: float = 120.0) -> list[str]:
    """`work(k)` for k in range(workers), each in its own thread, all started at a barrier;
    the repr of every exception raised (an empty list when all succeeded)."""
    errors: list[str] = []
    barrier = threading.Barrier(workers)

    def main(k: int) -> None:
        try:
            barrier.wait()
            work(k)
        except Exception as err:  # noqa: BLE001 (collected for the caller's assertion)
            errors.append(repr(err))

    threads = [threading.Thread(target=main, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return errors

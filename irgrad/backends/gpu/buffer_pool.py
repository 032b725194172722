"""`BufferPool`: caching allocation of device memory, shared by `CudaDevice` and
`EmulatedDevice`.

A freed block is kept and handed to the next allocation of the same size (sizes rounded up
to `ALLOCATION_GRANULE`), so the temporaries of a training step cost no `cuMemAlloc` after
its first call.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

ALLOCATION_GRANULE = 256
"""Bytes; device allocations are rounded up to this (cuMemAlloc aligns to 256 anyway)."""


class BufferPool:
    """Caching allocation over a device's raw `alloc`/`free` (module doc)."""

    def __init__(self, raw_alloc: Any, raw_free: Any):
        self.raw_alloc = raw_alloc
        self.raw_free = raw_free
        self.free_blocks: dict[int, list[int]] = defaultdict(list)
        self.sizes: dict[int, int] = {}

    def alloc(self, nbytes: int) -> int:
        size = max(ALLOCATION_GRANULE, -(-nbytes // ALLOCATION_GRANULE) * ALLOCATION_GRANULE)
        blocks = self.free_blocks.get(size)
        if blocks:
            return blocks.pop()
        pointer = self.raw_alloc(size)
        self.sizes[pointer] = size
        return pointer

    def free(self, pointer: int) -> None:
        self.free_blocks[self.sizes[pointer]].append(pointer)

    def release(self) -> None:
        """Give every cached block back to the device."""
        for blocks in self.free_blocks.values():
            for pointer in blocks:
                self.raw_free(pointer)
                del self.sizes[pointer]
        self.free_blocks.clear()

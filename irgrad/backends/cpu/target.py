"""The host target: what this process compiles for, and which object code it can load.

`host_target()` names the triple, CPU and SIMD features programs are compiled for (its `repr`,
with `ABI_VERSION`, belongs in any cache key of object code); `check_object(data)` refuses
object code that is not a whole relocatable ELF object for this machine before LLVM's loader,
which trusts its input, sees it.

The lowest layer of the CPU backend: the runtimes' object cache (runtime_objects.py), the
process set-up (process.py), compiling and loading all import it, and it imports none of them.
So it initializes only LLVM's native target, which detecting the host needs; the rest of the
process set-up (symbols, the allocation guard) is process.py's `initialize`.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass

import llvmlite.binding as llvm

from irgrad.backends.cpu.errors import CompileError

_lock = threading.Lock()
_native_target_initialized = False


def initialize_native_target() -> None:
    """Initialize LLVM's native target and its assembly printer, once per process."""
    global _native_target_initialized
    with _lock:
        if _native_target_initialized:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        _native_target_initialized = True


ABI_VERSION = 2
"""The calling convention between `CompiledFunction` and the packed entries; part of the
cache key (`repr(host_target())`), so object code built for another one is never loaded.
2: a memref's slot points at a word holding its data pointer."""


@dataclass(frozen=True)
class HostTarget:
    """What the code is compiled for; `repr` of it belongs in any cache key of objects."""

    triple: str
    cpu: str
    features: str
    abi: int = ABI_VERSION

    @staticmethod
    def detect() -> HostTarget:
        initialize_native_target()
        return HostTarget(
            llvm.get_process_triple(),
            llvm.get_host_cpu_name(),
            llvm.get_host_cpu_features().flatten(),
        )

    def target_machine(self, opt_level: int = 3) -> llvm.TargetMachine:
        """A new TargetMachine (an engine takes ownership of the one it is given)."""
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(
            cpu=self.cpu, features=self.features, opt=opt_level, reloc="pic"
        )


_host: HostTarget | None = None


def host_target() -> HostTarget:
    global _host
    if _host is None:
        _host = HostTarget.detect()
    return _host


def check_object(data: bytes) -> None:
    """CompileError unless `data` is a whole ELF relocatable object for this machine.

    LLVM's loader trusts its input (a truncated or foreign file crashes the process), so
    the header and every section's extent are checked first.
    """

    def fail(why: str) -> CompileError:
        return CompileError(f"not loadable object code: {why}")

    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise fail("no ELF header")
    if data[4] != 2 or data[5] != 1:
        raise fail("not a 64-bit little-endian ELF file")
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    expected_machine = {"x86_64": 62, "aarch64": 183}.get(llvm.get_process_triple().split("-")[0])
    if e_type != 1 or (expected_machine is not None and e_machine != expected_machine):
        raise fail(
            f"ELF type {e_type}, machine {e_machine}: not a relocatable object for this host"
        )
    (e_shoff,) = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 58)
    if e_shentsize != 64 or e_shnum == 0 or e_shstrndx >= e_shnum:
        raise fail("bad section header table")
    if e_shoff + e_shnum * 64 > len(data):
        raise fail("truncated (section headers past the end)")
    for k in range(e_shnum):
        sh_type, _, _, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", data, e_shoff + 64 * k)[
            1:6
        ]
        if sh_type != 8 and sh_offset + sh_size > len(data):  # 8: SHT_NOBITS
            raise fail(f"truncated (section {k} past the end)")


__all__ = ["ABI_VERSION", "HostTarget", "check_object", "host_target", "initialize_native_target"]

"""Stage "nvvm" -> PTX: llvmlite's NVPTX target, libdevice, and ptxas as a check.

`to_ptx(module, arch)` takes the `gpu.module` of a stage-"nvvm" module (or a module of llvm
ops that is one already) and returns its PTX:
1. translation to LLVM IR by the CPU backend's `to_llvm_ir` (xDSL's `convert_module` plus
   linkage and alignment), for the `nvptx64-nvidia-cuda` triple, then what NVPTX needs and
   xDSL cannot say: the `ptx_kernel` calling convention on `nvvm.kernel` functions, and
   `addrspacecast` for the llvm dialect's `llvm.addrspacecast` (irgrad/dialects/upstream/llvm.py),
   which goes through xDSL's translation as a `bitcast` between address spaces;
2. libdevice linked in when the kernels call `__nv_*` functions: CUDA's
   `nvvm/libdevice/libdevice.10.bc`, found through `$IRGRAD_LIBDEVICE`, `$CUDA_HOME`,
   `$CUDA_PATH`, `nvcc` or `ptxas` on PATH, or /usr/local/cuda; everything but the kernels
   and the device globals is then made internal, so LLVM drops the functions no kernel
   calls;
3. LLVM's O3 pipeline for the target (NVVMReflect resolves libdevice's `__nvvm_reflect`,
   address-space inference recovers `ld.global`/`ld.shared`), then PTX from llvmlite's
   NVPTX backend for `arch` (default sm_80; the PTX ISA version is LLVM's minimum for it).
`ptxas_check(ptx, arch)` assembles PTX with ptxas when it is installed: the check the tests
run without a GPU.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import llvmlite.binding as llvm
import llvmlite.ir as ir
from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from irgrad.dialects.upstream.llvm import as_bitcasts
from irgrad.diagnostics import IrgradError
from irgrad.lowering.gpu.common import SHARED_MEMORY_SPACE
from irgrad.lowering.gpu.gpu_to_nvvm import KERNEL_ATTR

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"
LIBDEVICE_ENV = "IRGRAD_LIBDEVICE"
_PTX_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class PtxCompileError(IrgradError):
    """The device module could not be turned into PTX (or ptxas rejected the PTX)."""


@dataclass
class PtxModule:
    """PTX text and what the runtime looks up in it."""

    ptx: str
    arch: str
    kernels: tuple[str, ...]
    globals: tuple[str, ...]
    llvm_ir: str = field(repr=False, default="")
    """The LLVM IR before optimization (and before libdevice is linked)."""
    uses_libdevice: bool = False


_lock = threading.Lock()
_initialized = False


def initialize() -> None:
    global _initialized
    with _lock:
        if not _initialized:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            _initialized = True


def target_machine(arch: str = DEFAULT_ARCH, opt_level: int = 3) -> llvm.TargetMachine:
    initialize()
    target = llvm.Target.from_triple(NVPTX_TRIPLE)
    return target.create_target_machine(cpu=arch, opt=opt_level)


# ---------------------------------------------------------------------------------------------
# libdevice
# ---------------------------------------------------------------------------------------------


def find_libdevice() -> Path | None:
    """CUDA's libdevice bitcode, or None (see the module doc for where it looks)."""
    explicit = os.environ.get(LIBDEVICE_ENV)
    if explicit:
        return Path(explicit) if Path(explicit).is_file() else None
    roots: list[Path] = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]))
    for tool in ("nvcc", "ptxas"):
        found = shutil.which(tool)
        if found:
            roots.append(Path(os.path.realpath(found)).parent.parent)
    roots.append(Path("/usr/local/cuda"))
    for root in roots:
        directory = root / "nvvm" / "libdevice"
        if directory.is_dir():
            candidates = sorted(directory.glob("libdevice*.bc"))
            if candidates:
                return candidates[0]
    return None


_libdevice_bitcode: dict[Path, bytes] = {}


def _libdevice(path: Path) -> llvm.ModuleRef:
    data = _libdevice_bitcode.get(path)
    if data is None:
        data = path.read_bytes()
        _libdevice_bitcode[path] = data
    return llvm.parse_bitcode(data)


# ---------------------------------------------------------------------------------------------
# Translation
# ---------------------------------------------------------------------------------------------


def device_module(module: ModuleOp) -> ModuleOp:
    """The llvm-dialect device code of `module`: its one `gpu.module` as a builtin.module
    (copied), or `module` itself when it holds llvm ops only."""
    kernels = [op for op in module.ops if isinstance(op, gpu.ModuleOp)]
    if len(kernels) > 1:
        raise PtxCompileError("the module has several gpu.modules; irgrad emits one")
    if kernels:
        return ModuleOp([op.clone() for op in kernels[0].body.block.ops])
    if all(op.name.startswith("llvm.") for op in module.ops):
        return module
    for op in module.walk():
        if op.name in ("scf.parallel", "gpu.launch", "gpu.launch_func", "gpu.func"):
            raise PtxCompileError(
                f"the module still holds '{op.name}': run the irgrad-gpu pipeline (or "
                "convert-gpu-to-nvvm) first"
            )
    return ModuleOp([])  # host code only: no kernels


def to_llvm_ir(device: ModuleOp, data_layout: str) -> tuple[ir.Module, list[str], list[str]]:
    """LLVM IR of a device module (module doc, step 1), its kernels and device globals."""
    from irgrad.backends.cpu.translate import to_llvm_ir as cpu_to_llvm_ir

    as_bitcasts(device)
    try:
        result = cpu_to_llvm_ir(device, triple=NVPTX_TRIPLE, data_layout=data_layout)
    except IrgradError as err:
        raise PtxCompileError(f"the device module is not in llvm form: {err}") from err
    kernels: list[str] = []
    device_globals: list[str] = []
    for op in device.ops:
        if isinstance(op, llvm_dialect.FuncOp) and KERNEL_ATTR in op.attributes:
            kernels.append(op.sym_name.data)
            fn = result.get_global(op.sym_name.data)
            fn.calling_convention = "ptx_kernel"
        elif isinstance(op, llvm_dialect.GlobalOp) and op.addr_space.value.data != SHARED_MEMORY_SPACE:
            if op.linkage.linkage.data == "external":
                device_globals.append(op.sym_name.data)
    for name in (*kernels, *device_globals):
        if not _PTX_IDENTIFIER.fullmatch(name):
            raise PtxCompileError(
                f"'{name}' is not a PTX identifier (letters, digits, '_', '$'), so the runtime "
                "could not find it by name in the PTX; rename the function or global"
            )
    for gv in result.global_values:
        if isinstance(gv, ir.GlobalVariable) and gv.linkage == "external" and gv.initializer is not None:
            gv.linkage = ""  # LLVM spells a defined external global without the keyword
    for fn in result.functions:
        for block in fn.blocks:
            for instruction in block.instructions:
                _fix_address_space_cast(instruction)
    return result, kernels, device_globals


def _fix_address_space_cast(instruction: ir.Instruction) -> None:
    """`bitcast ptr addrspace(N) to ptr` is `addrspacecast` (module doc)."""
    if getattr(instruction, "opname", None) != "bitcast":
        return
    source = instruction.operands[0].type
    target = instruction.type
    if (
        isinstance(source, ir.PointerType)
        and isinstance(target, ir.PointerType)
        and source.addrspace != target.addrspace
    ):
        instruction.opname = "addrspacecast"


def to_ptx(module: ModuleOp, arch: str = DEFAULT_ARCH, *, opt_level: int = 3) -> PtxModule:
    """PTX of the device code of a stage-"nvvm" module (module doc)."""
    tm = target_machine(arch, opt_level)
    device = device_module(module)
    ir_module, kernels, device_globals = to_llvm_ir(device, str(tm.target_data))
    text = str(ir_module)
    try:
        ref = llvm.parse_assembly(text)
        ref.verify()
    except RuntimeError as err:
        raise PtxCompileError(f"LLVM rejected the device module: {err}") from err
    uses_libdevice = any(f.is_declaration and f.name.startswith("__nv_") for f in ref.functions)
    if uses_libdevice:
        path = find_libdevice()
        if path is None:
            names = sorted(f.name for f in ref.functions if f.is_declaration and f.name.startswith("__nv_"))
            raise PtxCompileError(
                f"the kernels call libdevice ({', '.join(names)}) but libdevice.10.bc was not "
                f"found; install CUDA's nvvm component or set {LIBDEVICE_ENV} to its path"
            )
        ref.link_in(_libdevice(path))
    keep = set(kernels) | set(device_globals)
    for fn in ref.functions:
        if not fn.is_declaration and fn.name not in keep:
            fn.linkage = llvm.Linkage.internal
    for gv in ref.global_variables:
        if gv.name not in keep and not gv.is_declaration:
            gv.linkage = llvm.Linkage.internal
    if opt_level > 0:
        tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        builder = llvm.create_pass_builder(tm, tuning)
        builder.getModulePassManager().run(ref, builder)
    missing = [
        f.name
        for f in ref.functions
        if f.is_declaration and not f.name.startswith("llvm.") and f.name not in keep
    ]
    if missing:
        raise PtxCompileError(
            f"the kernels call {', '.join(sorted(missing))}, which no device library provides"
        )
    try:
        ptx = tm.emit_assembly(ref)
    except RuntimeError as err:
        raise PtxCompileError(f"LLVM's NVPTX backend failed: {err}") from err
    return PtxModule(ptx, arch, tuple(kernels), tuple(device_globals), text, uses_libdevice)


# ---------------------------------------------------------------------------------------------
# ptxas
# ---------------------------------------------------------------------------------------------


def find_ptxas() -> str | None:
    return shutil.which("ptxas")


def ptxas_check(ptx: str, arch: str = DEFAULT_ARCH, *, ptxas: str | None = None) -> bool:
    """Assemble `ptx` for `arch` with ptxas; False when ptxas is not installed, and a
    PtxCompileError with ptxas's messages when it rejects the PTX."""
    tool = ptxas or find_ptxas()
    if tool is None:
        return False
    with tempfile.TemporaryDirectory(prefix="irgrad-ptx-") as tmp:
        source = Path(tmp) / "kernels.ptx"
        source.write_text(ptx)
        result = subprocess.run(
            [tool, f"-arch={arch}", str(source), "-o", str(Path(tmp) / "kernels.cubin")],
            capture_output=True,
            text=True,
        )
    if result.returncode != 0:
        raise PtxCompileError(f"ptxas -arch={arch} rejected the PTX:\n{result.stderr.strip()}")
    return True




# ---------------------------------------------------------------------------------------------
# irgrad-opt -t ptx
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PTXTarget(Target):
    """`-t ptx`: the PTX of the module's kernels (`-t 'ptx{arch=sm_90}'`, or --gpu-arch)."""

    name = "ptx"
    arch: str = DEFAULT_ARCH

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(to_ptx(module, self.arch).ptx)


__all__ = [
    "DEFAULT_ARCH",
    "NVPTX_TRIPLE",
    "PTXTarget",
    "PtxCompileError",
    "PtxModule",
    "device_module",
    "find_libdevice",
    "find_ptxas",
    "ptxas_check",
    "target_machine",
    "to_ptx",
]

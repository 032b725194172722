"""`convert-mpi-to-llvm`: the `mpi` dialect's buffer ops to calls of the MPI runtime's entry points.

Input invariant: `mpi.alltoall_buffers` / `allgather_buffers` on identity-layout memrefs with
static shapes (as `bufferize` makes them) and `mpi.comm_rank`, their communicators made by
`mpi.grid_comm` (all on one grid) or `mpi.comm_world`.
Output IR, with the memref operands as pointers (through unrealized casts, as in
convert-blas-to-llvm, so run this pass before convert-memref-to-llvm):

    llvm.call @irgrad_mpi_alltoall(ptr send, ptr recv, i64 block_bytes, i64 group, i64 site)
    llvm.call @irgrad_mpi_allgather(ptr send, ptr recv, i64 bytes, i64 group, i64 site)
    %r = llvm.call @irgrad_mpi_comm_rank(i64 group) : i32

No MPI constant is baked in: `group` names the communicator by the bit mask of its grid axes
(bit a for axis a; -1 for `mpi.comm_world`), which the runtime maps to a handle it got from
mpi4py (irgrad/backends/mpi/compiled.py). `site` indexes the module attribute
`irgrad.mpi.sites`, one string per collective ("mpi.allgather over grid axes [0] of
float32[3] at file:line:col"), which the runtime reads to name a collective that failed;
`irgrad.mpi.grid` records the grid the program was partitioned for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, MemRefType, ModuleOp, StringAttr, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irgrad.diagnostics import PassError, location_of
from irgrad.dialects import mpi
from irgrad.lowering.llvm.builder import LLVMBuilder
from irgrad.lowering.llvm.checks import check_no_ops_left
from irgrad.lowering.rewriting import apply_conversion
from irgrad.tracing.dtypes import from_element_type

ALLTOALL = "irgrad_mpi_alltoall"
ALLGATHER = "irgrad_mpi_allgather"
COMM_RANK = "irgrad_mpi_comm_rank"
SITES_ATTR = "irgrad.mpi.sites"
GRID_ATTR = "irgrad.mpi.grid"
WORLD = -1
"""The `group` of `mpi.comm_world`."""


def group_of(comm: SSAValue, op: Operation) -> tuple[int, tuple[int, ...] | None]:
    """The `group` argument for communicator `comm` and the grid it is on (None: the world)."""
    owner = comm.owner
    if isinstance(owner, mpi.CommWorldOp):
        return WORLD, None
    if isinstance(owner, mpi.GridCommOp):
        return sum(1 << a for a in owner.axes), owner.shape
    raise PassError("uses a communicator that no mpi.grid_comm or mpi.comm_world makes", op)


def describe(op: mpi.AllToAllBuffersOp | mpi.AllGatherBuffersOp) -> str:
    """What the collective is and where, for the runtime's error messages."""
    location = location_of(op.location)
    where = f"at {location}" if location is not None else "at an unlocated op"
    return f"{mpi.describe(op)} {where}"


def _bytes(value: SSAValue) -> int:
    t = cast(MemRefType[Attribute], value.type)
    count = 1
    for n in t.get_shape():
        count *= n
    return count * from_element_type(t.get_element_type()).itemsize


class MpiLowering(RewritePattern):
    """One call per op; the sites and the grid are collected for the module's attributes."""

    def __init__(self, sites: list[str]) -> None:
        self.sites = sites
        self.grid: tuple[int, ...] | None = None

    def _group(self, comm: SSAValue, op: Operation) -> int:
        group, grid = group_of(comm, op)
        if grid is not None:
            if self.grid is not None and grid != self.grid:
                raise PassError(
                    f"uses a communicator of grid {list(grid)}, another op one of grid {list(self.grid)}: "
                    "a program runs on one grid", op)
            self.grid = grid
        return group

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, mpi.BUFFER_MOVEMENT):
            group = self._group(op.comm, op)
            b = LLVMBuilder(rewriter, op)
            shape = cast(MemRefType[Attribute], op.send.type).get_shape()
            if isinstance(op, mpi.AllToAllBuffersOp):
                callee, size = ALLTOALL, _bytes(op.send) // max(shape[0], 1)
            else:
                callee, size = ALLGATHER, _bytes(op.send)
            args = [b.operand(op.send), b.operand(op.recv), b.const_int(size), b.const_int(group),
                    b.const_int(len(self.sites))]
            self.sites.append(describe(op))
            b.call(callee, args, None)
            rewriter.erase(op)
        elif isinstance(op, mpi.CommRankOp):
            b = LLVMBuilder(rewriter, op)
            b.replace(op, b.call(COMM_RANK, [b.const_int(self._group(op.comm, op))], i32))


@dataclass(frozen=True)
class ConvertMpiToLLVMPass(ModulePass):
    """Lower mpi.alltoall_buffers / allgather_buffers / comm_rank to calls of the runtime's
    irgrad_mpi_* entry points; communicator ops go once unused.

    Input invariant: see the module docstring. Output IR: llvm.call ops and their
    declarations; the module attributes irgrad.mpi.sites and irgrad.mpi.grid.
    """

    name = "convert-mpi-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if isinstance(inner, mpi.AllToAllOp | mpi.AllGatherOp):
                raise PassError("works on tensors: run bufferize first", inner)
        previous = op.attributes.get(SITES_ATTR)
        sites = [s.data for s in cast(ArrayAttr[StringAttr], previous).data] if previous is not None else []
        lowering = MpiLowering(sites)
        apply_conversion(op, [lowering], dialect="mpi")
        for inner in list(op.walk()):
            if isinstance(inner, mpi.GridCommOp | mpi.CommWorldOp):
                if inner.result.uses:
                    raise PassError("is used by an op convert-mpi-to-llvm does not lower", next(iter(inner.result.uses)).operation)
                inner.detach()
                inner.erase()
        check_no_ops_left(op, "mpi", self.name)
        if sites:
            op.attributes[SITES_ATTR] = ArrayAttr([StringAttr(s) for s in sites])
        if lowering.grid is not None:
            op.attributes[GRID_ATTR] = DenseArrayBase.from_list(i64, list(lowering.grid))

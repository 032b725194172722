"""The `view-op-graph` pass: the module's computation graph as Graphviz DOT (MLIR's -view-op-graph).

The graph is op_graph.py's (ops as nodes with name, types and attributes; uses as edges; primal and
adjoint parts of a differentiated function in two clusters). The pass changes no IR; as in MLIR it writes
the DOT to stderr, or to the file `output` names. `irgrad-opt --view-op-graph` prints it instead of the
module, on stdout or to `-o` (irgrad/driver/opt.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irgrad.analysis.op_graph import OpGraph, op_graph
from irgrad.diagnostics import PassError


@dataclass(frozen=True)
class ViewOpGraphPass(ModulePass):
    """Print the module's computation graph as Graphviz DOT (to stderr, or to the file `output`).

    Input invariant: a verified module, at any stage.
    Output IR: the input, unchanged. Options as MLIR's: `max-label-len` cuts attributes and types (0: no
    limit), `print-attrs`, `print-result-types`, `print-data-flow-edges`, `print-control-flow-edges`;
    irgrad's own: `print-adjoint-edges` (dashed ties from adjoint ops to their primal ops), `max-depth`
    (levels of nested regions drawn open; 0 draws an op with regions as one node) and `output`.
    """

    name = "view-op-graph"

    max_label_len: int = 20
    print_attrs: bool = True
    print_result_types: bool = True
    print_data_flow_edges: bool = True
    print_control_flow_edges: bool = False
    print_adjoint_edges: bool = True
    max_depth: int = 0
    output: str = ""
    """A file to write the DOT to; empty: stderr."""

    def __post_init__(self) -> None:
        for option, value in (("max-label-len", self.max_label_len), ("max-depth", self.max_depth)):
            if value < 0:
                raise ValueError(f"option '{option}' must be >= 0, got {value}")

    def graph(self, module: ModuleOp) -> OpGraph:
        """The graph this pass prints, built with its options."""
        return op_graph(
            module,
            max_label_len=self.max_label_len,
            print_attrs=self.print_attrs,
            print_result_types=self.print_result_types,
            print_data_flow_edges=self.print_data_flow_edges,
            print_control_flow_edges=self.print_control_flow_edges,
            print_adjoint_edges=self.print_adjoint_edges,
            max_depth=self.max_depth,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        text = self.graph(op).to_dot()
        if not self.output:
            sys.stderr.write(text)
            return
        try:
            with open(self.output, "w") as out:
                out.write(text)
        except OSError as err:
            raise PassError(f"view-op-graph: could not write '{self.output}': {err.strerror or err}") from None

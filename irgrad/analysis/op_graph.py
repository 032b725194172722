"""Pictures of a module's computation graph: ops as nodes, uses as edges, Graphviz DOT out.

`op_graph(module)` builds an `OpGraph` (nodes, edges, clusters); `.to_dot()` writes it in Graphviz's
language and `.to_svg()` has graphviz's `dot` draw it. It draws what MLIR's -view-op-graph draws
(mlir/lib/Transforms/ViewOpGraph.cpp), made for reading a differentiated program:
- an op is a node labelled with its name, its result types (shape and dtype) and its attributes, each
  cut to `max_label_len` characters; a function argument is an input node with its Python name;
- a function is a cluster; where the reverse sweep emitted adjoint code (the locations of
  autodiff/adjoint_locations.py), its ops stand apart in clusters "primal", "adjoint" and, for code
  that uses the adjoints (an optimizer's update), "downstream of the adjoint"; each adjoint op is tied
  to the primal op it came from by a dashed edge, or, where that op is gone (DCE drops the forward
  values a gradient does not need), by a label line `adjoint of nn.sin`;
- an op with regions (scf.for, linalg.generic) is one node saying how many ops its body holds unless
  `max_depth` opens it as a cluster of its own, so a large program reads as its calls and loops;
- node ids are `v0, v1, ...` in walk order and clusters `cluster_0, ...`: the same module always gives
  the same DOT, which FileCheck can match.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from io import StringIO

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.printer import Printer

from irgrad.autodiff.adjoint_locations import adjoint_origin

PRIMAL, ADJOINT, DOWNSTREAM = "primal", "adjoint", "downstream"
_HIDDEN_ATTRIBUTES = ("operandSegmentSizes", "resultSegmentSizes", "sym_visibility")
_FILL = {PRIMAL: "#e8f0fe", ADJOINT: "#fdecea", DOWNSTREAM: "#eaf5ea"}
_PART_LABELS = {PRIMAL: "primal", ADJOINT: "adjoint", DOWNSTREAM: "downstream of the adjoint"}
_TIE_COLOR = "#c0392b"
_FUNCTIONS = (func.FuncOp, llvm.FuncOp)
_RETURNS = (func.ReturnOp, llvm.ReturnOp)


class GraphvizNotFoundError(RuntimeError):
    """graphviz's `dot` is not installed, so a graph cannot be drawn as SVG."""


@dataclass(frozen=True)
class Node:
    """One box of the picture: an op, a function or block argument, or a function's return."""

    id: str
    kind: str
    """"op", "input" (an argument) or "output" (`func.return`)."""
    op_name: str
    """The op's name (`nn.mul`); `input` for an argument."""
    label: str
    """The text drawn, one line per `\\n`."""
    role: str = PRIMAL
    """ADJOINT for an op the reverse sweep emitted, DOWNSTREAM for one that uses adjoint values (an
    optimizer's update of the parameters), else PRIMAL."""
    adjoint_of: str | None = None
    """For an adjoint op: the name of the primal op it came from."""
    body_ops: int = 0
    """For a collapsed op with regions: how many ops its regions hold."""


@dataclass(frozen=True)
class Edge:
    """A use (`data`), a branch (`control`) or an adjoint op's tie to its primal op (`adjoint`)."""

    source: str
    target: str
    kind: str


@dataclass
class Cluster:
    """A box around nodes: a function, its primal or adjoint part, an opened region, a block."""

    id: str
    kind: str
    """"function", PRIMAL, ADJOINT, DOWNSTREAM, "region" or "block"."""
    label: str
    nodes: list[str] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)

    def walk(self) -> Iterator[Cluster]:
        yield self
        for inner in self.clusters:
            yield from inner.walk()


@dataclass
class OpGraph:
    """The graph of a module: nodes in walk order, edges, and the clusters that group the nodes."""

    name: str
    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)
    """Nodes outside every cluster (top-level ops of the module other than functions)."""

    def nodes_named(self, op_name: str) -> list[Node]:
        return [node for node in self.nodes.values() if node.op_name == op_name]

    def all_clusters(self) -> list[Cluster]:
        return [c for top in self.clusters for c in top.walk()]

    def cluster(self, kind: str, label: str | None = None) -> Cluster:
        """The one cluster of `kind` (of that label); a KeyError names what there is."""
        found = [c for c in self.all_clusters() if c.kind == kind and (label is None or c.label == label)]
        if len(found) != 1:
            there = ", ".join(f"{c.kind} {c.label!r}" for c in self.all_clusters())
            raise KeyError(f"{len(found)} clusters of kind {kind!r} (label {label!r}); there are: {there}")
        return found[0]

    def members(self, cluster: Cluster) -> list[str]:
        """The ids of the nodes inside `cluster`, its inner clusters' included."""
        return [node for c in cluster.walk() for node in c.nodes]

    def edges_of(self, kind: str) -> list[Edge]:
        return [edge for edge in self.edges if edge.kind == kind]

    def to_dot(self) -> str:
        lines = [f"digraph {_quote(self.name)} {{", "  compound=true;",
                 '  node [fontname="Helvetica", fontsize=10];', '  edge [fontname="Helvetica", fontsize=9];']
        for cluster in self.clusters:
            self._cluster_dot(cluster, lines, "  ")
        for node in self.loose:
            lines.append(f"  {self._node_dot(self.nodes[node])}")
        for edge in self.edges:
            lines.append(f"  {edge.source} -> {edge.target}{_EDGE_STYLE[edge.kind]};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_svg(self) -> str:
        """The picture as SVG, drawn by graphviz's `dot`; GraphvizNotFoundError when it is not installed."""
        dot = shutil.which("dot")
        if dot is None:
            raise GraphvizNotFoundError(
                "drawing an op graph as SVG needs graphviz's `dot`, which is not on PATH: install graphviz "
                "(apt-get install graphviz), or write the DOT text with to_dot() and draw it elsewhere"
            )
        run = subprocess.run([dot, "-Tsvg"], input=self.to_dot(), capture_output=True, text=True, check=False)
        if run.returncode != 0:
            raise RuntimeError(f"`dot -Tsvg` failed (exit {run.returncode}): {run.stderr.strip()}")
        return run.stdout

    def write(self, path: str) -> None:
        """Write the DOT text (a `.dot` or `.gv` path) or the SVG picture (a `.svg` path) to `path`."""
        if path.endswith(".svg"):
            text = self.to_svg()
        elif path.endswith((".dot", ".gv")):
            text = self.to_dot()
        else:
            raise ValueError(f"write an op graph to a .dot, .gv or .svg file, not {path!r}")
        with open(path, "w") as out:
            out.write(text)

    def _cluster_dot(self, cluster: Cluster, lines: list[str], indent: str) -> None:
        lines.append(f"{indent}subgraph {cluster.id} {{")
        inner = indent + "  "
        lines.append(f"{inner}label={_quote(cluster.label)};")
        if cluster.kind in _FILL:
            lines.append(f'{inner}style=filled; fillcolor="{_FILL[cluster.kind]}";')
        elif cluster.kind != "function":
            lines.append(f"{inner}style=dashed;")
        for node in cluster.nodes:
            lines.append(f"{inner}{self._node_dot(self.nodes[node])}")
        for sub in cluster.clusters:
            self._cluster_dot(sub, lines, inner)
        lines.append(f"{indent}}}")

    @staticmethod
    def _node_dot(node: Node) -> str:
        shape = {"input": ", shape=box, style=rounded", "output": ", shape=box"}.get(node.kind, "")
        if node.kind == "op" and node.body_ops:
            shape = ", shape=box3d"
        return f"{node.id} [label={_quote(node.label)}{shape}];"


_EDGE_STYLE = {
    "data": "",
    "control": " [style=dashed]",
    "adjoint": f' [style=dashed, color="{_TIE_COLOR}", arrowhead=empty, constraint=false]',
}


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _attribute_text(attribute: Attribute) -> str:
    out = StringIO()
    Printer(stream=out).print_attribute(attribute)
    return out.getvalue()


def _shorten(text: str, limit: int) -> str:
    return text if limit <= 0 or len(text) <= limit else text[:limit] + "..."


@dataclass
class _Options:
    max_label_len: int
    print_attrs: bool
    print_result_types: bool
    print_data_flow_edges: bool
    print_control_flow_edges: bool
    print_adjoint_edges: bool
    max_depth: int


class _Builder:
    """Walks the module once, making nodes, clusters and edges in walk order."""

    def __init__(self, graph: OpGraph, options: _Options, arg_names: Mapping[str, Sequence[str]]):
        self.graph = graph
        self.options = options
        self.arg_names = arg_names
        self.node_of: dict[SSAValue, str] = {}
        self.uses: list[tuple[SSAValue, str]] = []
        """(value, id of the node that uses it), edges made once every value has its node."""
        self.successors: list[tuple[str, Block]] = []
        self.block_entry: dict[Block, str] = {}
        self.adjoint_ops: list[tuple[str, Operation, str]] = []
        """(node, op, the function it stands in) of every marked adjoint op."""
        self.primal_ops: dict[tuple[str, str, Attribute], list[str]] = {}
        """(function, op name, location) -> the primal nodes of that name and location there."""
        self.function_name = ""
        self._clusters = 0

    # -- ids ------------------------------------------------------------------------------

    def _node(self, kind: str, op_name: str, label: str, **rest: object) -> str:
        node_id = f"v{len(self.graph.nodes)}"
        self.graph.nodes[node_id] = Node(node_id, kind, op_name, label, **rest)  # type: ignore[arg-type]
        return node_id

    def _cluster(self, kind: str, label: str) -> Cluster:
        cluster = Cluster(f"cluster_{self._clusters}", kind, label)
        self._clusters += 1
        return cluster

    # -- walking ------------------------------------------------------------------------------

    def module(self, module: ModuleOp) -> None:
        for op in module.body.block.ops:
            if isinstance(op, _FUNCTIONS):
                if op.body.blocks:
                    self.graph.clusters.append(self.function(op))
            else:
                self.op(op, self.graph.loose, self.graph.clusters, depth=0, role=PRIMAL)
        self._finish_edges()

    def function(self, function: func.FuncOp | llvm.FuncOp) -> Cluster:
        name = self.function_name = function.sym_name.data
        cluster = self._cluster("function", f"@{name}")
        names = list(self.arg_names.get(name, ()))
        blocks = list(function.body.blocks)
        for index, block in enumerate(blocks):
            target = cluster if len(blocks) == 1 else self._cluster("block", f"^bb{index}")
            self.block(block, target, depth=0, python_names=names if index == 0 else (), split=True)
            if target is not cluster:
                cluster.clusters.append(target)
        return cluster

    def block(self, block: Block, cluster: Cluster, depth: int, python_names: Sequence[str] = (),
              split: bool = False) -> None:
        """Nodes for `block`'s arguments and ops in `cluster`; `split` puts primal and adjoint ops in two
        inner clusters when the block holds adjoint ops."""
        first_arg = None
        for arg in block.args:
            node = self._argument(arg, python_names)
            cluster.nodes.append(node)
            first_arg = first_arg or node
        ops = list(block.ops)
        roles = _roles(ops)
        parts: dict[str, Cluster] = {}
        if split and ADJOINT in roles.values():
            parts = {role: self._cluster(role, _PART_LABELS[role]) for role in (PRIMAL, ADJOINT, DOWNSTREAM)}
        first_op = None
        for op in ops:
            role = roles[op]
            is_return = isinstance(op, _RETURNS)
            part = cluster if is_return or not parts else parts[role]
            node = self.op(op, part.nodes, part.clusters, depth, role)
            first_op = first_op or node
        for role in (PRIMAL, ADJOINT, DOWNSTREAM):
            if role in parts and (parts[role].nodes or parts[role].clusters):
                cluster.clusters.append(parts[role])
        self.block_entry[block] = first_arg or first_op or ""

    def _argument(self, arg: BlockArgument, python_names: Sequence[str]) -> str:
        if arg.index < len(python_names):
            name = python_names[arg.index]
        else:
            name = f"%{arg.name_hint or f'arg{arg.index}'}"
        label = name
        if self.options.print_result_types:
            label += "\n" + _shorten(_attribute_text(arg.type), self.options.max_label_len)
        node = self._node("input", "input", label)
        self.node_of[arg] = node
        return node

    def op(self, op: Operation, nodes: list[str], clusters: list[Cluster], depth: int, role: str) -> str:
        """The node of `op` (in `nodes`, or in a new cluster of `clusters` when its regions open)."""
        origin = adjoint_origin(op.location) if role == ADJOINT else None
        opens = bool(op.regions) and depth < self.options.max_depth
        body_ops = 0 if opens else sum(1 for region in op.regions for _ in region.walk())
        lines = ["return" if isinstance(op, _RETURNS) else op.name]
        if self.options.print_attrs:
            lines += self._attribute_lines(op)
        if self.options.print_result_types:
            lines += [_shorten(_attribute_text(t), self.options.max_label_len) for t in op.result_types]
        if body_ops:
            lines.append(f"body: {body_ops} ops")
        kind = "output" if isinstance(op, _RETURNS) else "op"
        node = self._node(kind, op.name, "\n".join(lines), role=role,
                          adjoint_of=origin.op_name if origin else None, body_ops=body_ops)
        for result in op.results:
            self.node_of[result] = node
        for operand in op.operands:
            self.uses.append((operand, node))
        if op.successors:
            self.successors += [(node, block) for block in op.successors]
        if origin is not None:
            self.adjoint_ops.append((node, op, self.function_name))
        elif role == PRIMAL and not isinstance(op, _RETURNS):
            self.primal_ops.setdefault((self.function_name, op.name, op.location), []).append(node)
        if opens:
            region_cluster = self._cluster("region", op.name)
            region_cluster.nodes.append(node)
            for index, region in enumerate(op.regions):
                for block_index, block in enumerate(region.blocks):
                    inner = self._cluster("block", f"region #{index}" + (f" ^bb{block_index}" if block_index else ""))
                    self.block(block, inner, depth + 1)
                    region_cluster.clusters.append(inner)
            clusters.append(region_cluster)
        else:
            nodes.append(node)
            for value in _captured(op):
                self.uses.append((value, node))
        return node

    def _attribute_lines(self, op: Operation) -> list[str]:
        lines = []
        for name, value in [*op.properties.items(), *op.attributes.items()]:
            if name in _HIDDEN_ATTRIBUTES or (isinstance(op, _FUNCTIONS) and name == "function_type"):
                continue
            lines.append(f"{name}: {_shorten(_attribute_text(value), self.options.max_label_len)}")
        return lines

    # -- edges ----------------------------------------------------------------------------

    def _finish_edges(self) -> None:
        edges = self.graph.edges
        if self.options.print_data_flow_edges:
            for value, user in self.uses:
                source = self.node_of.get(value)
                if source is not None:
                    edges.append(Edge(source, user, "data"))
        if self.options.print_control_flow_edges:
            for node, block in self.successors:
                target = self.block_entry.get(block, "")
                if target:
                    edges.append(Edge(node, target, "control"))
        for node, op, function in self.adjoint_ops:
            origin = adjoint_origin(op.location)
            assert origin is not None
            # The primal op in the same function (the forward sweep beside this adjoint code), else in
            # another one (the differentiated function itself, where DCE dropped the forward sweep).
            primal = self.primal_ops.get((function, origin.op_name, origin.location), [])
            if not primal:
                primal = [n for (_, name, location), nodes in self.primal_ops.items()
                          if name == origin.op_name and location == origin.location for n in nodes]
            if len(primal) == 1 and self.options.print_adjoint_edges:
                edges.append(Edge(node, primal[0], "adjoint"))
            elif len(primal) != 1:
                # The primal op is gone (or ambiguous): say in the label where this op came from.
                old = self.graph.nodes[node]
                self.graph.nodes[node] = Node(old.id, old.kind, old.op_name, f"{old.label}\nadjoint of {origin.op_name}",
                                              old.role, old.adjoint_of, old.body_ops)


def _roles(ops: Sequence[Operation]) -> dict[Operation, str]:
    """The role of each op of a block: the marked ops are ADJOINT; an unmarked op that uses an ADJOINT or
    DOWNSTREAM value is DOWNSTREAM (the forward sweep never does: it comes first); an unmarked op without
    operands (a constant, a gradient's seed 1.0) that only non-primal ops use goes with them; the rest is
    PRIMAL. The return is the function's own, in no part."""
    roles: dict[Operation, str] = {}
    for op in ops:
        if adjoint_origin(op.location) is not None:
            roles[op] = ADJOINT
        elif not isinstance(op, _RETURNS) and any(
            roles.get(operand.owner) in (ADJOINT, DOWNSTREAM) for operand in op.operands  # type: ignore[arg-type]
        ):
            roles[op] = DOWNSTREAM
        else:
            roles[op] = PRIMAL
    for op in reversed(ops):
        if roles[op] == PRIMAL and not op.operands and not op.regions and op.results:
            users = [use.operation for result in op.results for use in result.uses
                     if not isinstance(use.operation, _RETURNS)]
            if users and all(roles.get(user) in (ADJOINT, DOWNSTREAM) for user in users):
                roles[op] = ADJOINT if any(roles.get(user) == ADJOINT for user in users) else DOWNSTREAM
    return roles


def _captured(op: Operation) -> list[SSAValue]:
    """Values defined outside `op` that its regions use, once each, in walk order."""
    if not op.regions:
        return []
    inside: set[SSAValue] = set()
    for region in op.regions:
        for inner in region.walk():
            inside.update(inner.results)
            for block_region in inner.regions:
                for block in block_region.blocks:
                    inside.update(block.args)
        for block in region.blocks:
            inside.update(block.args)
    seen: dict[SSAValue, None] = {}
    for region in op.regions:
        for inner in region.walk():
            for operand in inner.operands:
                if operand not in inside and operand not in op.operands:
                    seen.setdefault(operand, None)
    return list(seen)


def op_graph(
    module: ModuleOp,
    *,
    name: str = "module",
    arg_names: Mapping[str, Sequence[str]] | None = None,
    max_label_len: int = 20,
    print_attrs: bool = True,
    print_result_types: bool = True,
    print_data_flow_edges: bool = True,
    print_control_flow_edges: bool = False,
    print_adjoint_edges: bool = True,
    max_depth: int = 0,
) -> OpGraph:
    """The graph of `module` (unchanged by this). `arg_names` maps a function's name to the Python names
    of its arguments; `max_depth` is how many levels of nested regions open as clusters (0: every op
    with regions is one node); `max_label_len` cuts attributes and types (0: no limit)."""
    if max_label_len < 0 or max_depth < 0:
        raise ValueError(f"max_label_len and max_depth must be >= 0, got {max_label_len} and {max_depth}")
    options = _Options(max_label_len, print_attrs, print_result_types, print_data_flow_edges,
                       print_control_flow_edges, print_adjoint_edges, max_depth)
    graph = OpGraph(name)
    _Builder(graph, options, arg_names or {}).module(module)
    return graph


__all__ = ["ADJOINT", "DOWNSTREAM", "PRIMAL", "Cluster", "Edge", "GraphvizNotFoundError", "Node", "OpGraph", "op_graph"]

"""Op graphs (irgrad/analysis/op_graph.py) of z = x*x + sin(x) and its gradient, through
`ig.jit(f).lower(x).graph(stage)`: the DOT text is read back into nodes, edges and clusters and
checked against the program's structure (not pixels); the SVG is drawn where graphviz is installed."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import irgrad as ig
from irgrad.analysis import op_graph as op_graph_module
from irgrad.analysis.op_graph import ADJOINT, DOWNSTREAM, PRIMAL, GraphvizNotFoundError


def f(x):
    return x * x + ig.sin(x)


def loss(x):
    return ig.sum(f(x))


X = np.linspace(-1.0, 1.0, 3).astype(np.float32)


# -- reading the DOT back ---------------------------------------------------------------------


_NODE = re.compile(r'^\s*(v\d+) \[label="((?:[^"\\]|\\.)*)"(.*)\];$')
_EDGE = re.compile(r"^\s*(v\d+) -> (v\d+)( \[.*\])?;$")
_OPEN = re.compile(r"^\s*subgraph (cluster_\d+) \{$")
_LABEL = re.compile(r'^\s*label="((?:[^"\\]|\\.)*)";$')


def read_dot(text: str) -> dict:
    """Nodes (id -> (label, cluster labels around it, outermost first)), edges (source, target,
    dashed?) and the cluster labels nested in each cluster, read from the DOT text alone."""
    nodes, edges, children = {}, [], {None: []}
    stack: list[tuple[str, str]] = []
    lines = text.splitlines()
    assert lines[0].startswith("digraph ") and lines[-1] == "}"
    for line in lines[1:-1]:
        if m := _OPEN.match(line):
            stack.append((m.group(1), ""))
        elif (m := _LABEL.match(line)) and stack:
            cluster = stack[-1][0]
            stack[-1] = (cluster, m.group(1))
            children.setdefault(stack[-2][1] if len(stack) > 1 else None, []).append(m.group(1))
        elif line.strip() == "}":
            stack.pop()
        elif m := _NODE.match(line):
            nodes[m.group(1)] = (m.group(2).replace("\\n", "\n"), [label for _, label in stack])
        elif m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2), "dashed" in (m.group(3) or "")))
    assert not stack, "unbalanced subgraphs"
    return {"nodes": nodes, "edges": edges, "children": children}


def op_of(label: str) -> str:
    return label.split("\n")[0]


def ids_of(dot: dict, op: str) -> list[str]:
    return [node for node, (label, _) in dot["nodes"].items() if op_of(label) == op]


# -- forward -----------------------------------------------------------------------------------


def test_forward_graph_nodes_edges_and_argument_names():
    graph = ig.jit(f).lower(X).graph(stage="nn")
    dot = read_dot(graph.to_dot())
    assert graph.to_dot().startswith('digraph "f" {')
    labels = {label for label, _ in dot["nodes"].values()}
    # The input carries the Python name, every op its name, shape and dtype.
    assert {"x\ntensor<3xf32>", "nn.mul\ntensor<3xf32>", "nn.sin\ntensor<3xf32>",
            "nn.add\ntensor<3xf32>", "return"} <= labels
    (x,) = [n for n, (label, _) in dot["nodes"].items() if label.startswith("x\n")]
    (mul,), (sin,), (add,), (ret,) = (ids_of(dot, op) for op in ("nn.mul", "nn.sin", "nn.add", "return"))
    plain = sorted((s, t) for s, t, dashed in dot["edges"] if not dashed)
    assert plain == sorted([(x, mul), (x, mul), (x, sin), (mul, add), (sin, add), (add, ret)])
    # One function, no primal/adjoint split in a program without derivatives.
    assert dot["children"] == {None: ["@f"]}
    assert all(clusters == ["@f"] for _, clusters in dot["nodes"].values())
    # The graph object says the same as its DOT.
    assert [n.op_name for n in graph.nodes.values()] == ["input", "nn.mul", "nn.sin", "nn.add", "func.return"]
    assert list(graph.nodes) == [f"v{k}" for k in range(len(graph.nodes))]


def test_dot_is_deterministic():
    first = ig.jit(f).lower(X).graph("nn").to_dot()
    assert ig.jit(f).lower(X).graph("nn").to_dot() == first


# -- backward ----------------------------------------------------------------------------------


def test_value_and_grad_graph_draws_primal_and_adjoint_apart_with_ties():
    lowered = ig.jit(ig.value_and_grad(loss)).lower(X)
    graph = lowered.graph(stage="autodiff")
    dot = read_dot(graph.to_dot())
    assert dot["children"][None] == ["@loss"]
    assert dot["children"]["@loss"] == [PRIMAL, ADJOINT]
    where = {node: clusters for node, (_, clusters) in dot["nodes"].items()}
    label = {node: text for node, (text, _) in dot["nodes"].items()}
    primal = [n for n, c in where.items() if c == ["@loss", PRIMAL]]
    adjoint = [n for n, c in where.items() if c == ["@loss", ADJOINT]]
    assert sorted(op_of(label[n]) for n in primal) == ["nn.add", "nn.mul", "nn.reduce_sum", "nn.sin"]
    # sin's derivative is cos: an adjoint op only, tied (dashed) to the primal sin.
    (cos,) = ids_of(dot, "nn.cos")
    (sin,) = ids_of(dot, "nn.sin")
    assert cos in adjoint
    ties = {(s, t) for s, t, dashed in dot["edges"] if dashed}
    assert (cos, sin) in ties
    # Every tie runs from an adjoint node to a primal node of the op the adjoint node came from;
    # every adjoint op of mul, sin and reduce_sum has one; add's adjoint is the identity: no op.
    for source, target in ties:
        assert source in adjoint and target in primal
        assert graph.nodes[source].adjoint_of == op_of(label[target])
    tied = {graph.nodes[source].adjoint_of for source, _ in ties}
    assert tied == {"nn.mul", "nn.sin", "nn.reduce_sum"}
    marked = [n for n in adjoint if graph.nodes[n].adjoint_of is not None]
    assert sorted(s for s, _ in ties) == sorted(marked)
    # The inputs and the return stand outside both parts, the return fed by the value and the gradient.
    (x,) = [n for n, c in where.items() if label[n].startswith("x\n")]
    (ret,) = ids_of(dot, "return")
    assert where[x] == where[ret] == ["@loss"]
    into_return = [s for s, t, dashed in dot["edges"] if t == ret and not dashed]
    assert len(into_return) == 2 and into_return[0] in primal and into_return[1] in adjoint
    # The unmarked seed 1.0 only feeds adjoint ops: it is drawn in the adjoint part.
    seeds = [n for n in ids_of(dot, "nn.full") if "1.000000e+00" in label[n]]
    assert seeds and all(n in adjoint for n in seeds)


def test_code_that_uses_the_gradient_stands_downstream():
    """A step w - 0.1 * dloss/dw: the update uses adjoint values, so it is neither primal nor adjoint."""

    def step(w):
        value, grad = ig.value_and_grad(loss)(w)
        return w - 0.1 * grad, value

    graph = ig.jit(step).lower(X).graph("autodiff")
    dot = read_dot(graph.to_dot())
    assert dot["children"]["@step"] == [PRIMAL, ADJOINT, "downstream of the adjoint"]
    downstream = graph.members(graph.cluster(DOWNSTREAM))
    assert sorted(graph.nodes[n].op_name for n in downstream if graph.nodes[n].op_name != "nn.full") == [
        "nn.mul", "nn.sub"]
    assert all(graph.nodes[n].role == DOWNSTREAM for n in downstream)
    (sub,) = [n for n in downstream if graph.nodes[n].op_name == "nn.sub"]
    (x,) = [n for n in graph.nodes.values() if n.label.startswith("w\n")]
    assert ("data", x.id) in {(e.kind, e.source) for e in graph.edges if e.target == sub}


def test_gradient_alone_labels_adjoint_ops_with_their_primal_op():
    """DCE drops the forward values a gradient does not need: no primal cluster, the tie is a label."""
    graph = ig.jit(ig.grad(loss)).lower(X).graph(stage="autodiff")
    dot = read_dot(graph.to_dot())
    assert dot["children"]["@loss"] == [ADJOINT]
    (cos,) = ids_of(dot, "nn.cos")
    assert dot["nodes"][cos][0].endswith("\nadjoint of nn.sin")
    assert not [edge for edge in dot["edges"] if edge[2]]


def test_nn_stage_of_a_gradient_is_the_request():
    graph = ig.jit(ig.grad(loss)).lower(X).graph()
    assert [n.label.split("\n")[0] for n in graph.nodes.values() if n.kind == "op"][-1].startswith("autodiff.")
    assert not [n for n in graph.nodes.values() if n.role == ADJOINT]


# -- regions, options, errors --------------------------------------------------------------------


def test_loop_collapses_to_one_node_unless_opened():
    def body(i, h):
        return ig.tanh(h * 2.0 + 1.0)

    lowered = ig.jit(lambda x: ig.fori_loop(0, 4, body, x)).lower(X)
    collapsed = lowered.graph("nn")
    (loop,) = collapsed.nodes_named("scf.for")
    assert loop.body_ops > 0 and f"body: {loop.body_ops} ops" in loop.label
    assert "nn.tanh" not in [n.op_name for n in collapsed.nodes.values()]
    opened = lowered.graph("nn", max_depth=1)
    region = opened.cluster("region", "scf.for")
    inside = [opened.nodes[n].op_name for n in opened.members(region)]
    assert "nn.tanh" in inside and "scf.for" in inside
    assert not opened.nodes_named("scf.for")[0].body_ops


def test_label_length_and_attributes_options():
    lowered = ig.jit(f).lower(X)
    short = lowered.graph("nn", max_label_len=6)
    assert any(n.label == "nn.mul\ntensor..." for n in short.nodes.values())
    bare = lowered.graph("nn", print_result_types=False, print_data_flow_edges=False)
    assert not bare.edges and any(n.label == "nn.sin" for n in bare.nodes.values())
    with pytest.raises(ValueError, match="max_label_len and max_depth must be >= 0"):
        lowered.graph("nn", max_depth=-1)


def test_unknown_stage_raises_a_clear_error():
    lowered = ig.jit(f).lower(X)
    with pytest.raises(ValueError, match=r"unknown stage 'linalgg'; stages: nn, autodiff, linalg"):
        lowered.graph(stage="linalgg")
    with pytest.raises(ValueError, match=r"stage 'llvm-ir' is LLVM's text"):
        lowered.graph(stage="llvm-ir")


def test_later_stages_draw_too():
    lowered = ig.jit(ig.value_and_grad(loss)).lower(X)
    loops = lowered.graph("loops")
    assert loops.nodes_named("scf.parallel") or loops.nodes_named("scf.for")
    # The adjoint marks ride along through the lowering's rewrites.
    assert lowered.graph("linalg").cluster(ADJOINT)
    # llvm.func is a function too: a cluster of its blocks, not one collapsed node.
    llvm_graph = lowered.graph("llvm", print_control_flow_edges=True)
    assert llvm_graph.cluster("function", "@loss")
    assert llvm_graph.edges_of("control") and not llvm_graph.nodes_named("llvm.func")


def test_svg_without_graphviz_says_how_to_install_it(monkeypatch):
    graph = ig.jit(f).lower(X).graph("nn")
    monkeypatch.setattr(op_graph_module.shutil, "which", lambda name: None)
    with pytest.raises(GraphvizNotFoundError, match=r"apt-get install graphviz"):
        graph.to_svg()


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's `dot` is not installed (apt-get install graphviz)")
def test_svg_is_drawn_by_graphviz(tmp_path):
    graph = ig.jit(ig.value_and_grad(loss)).lower(X).graph("autodiff")
    svg = graph.to_svg()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for text in ("nn.sin", "nn.cos", ">primal<", ">adjoint<", ">x<"):
        assert text in svg, text
    graph.write(str(tmp_path / "g.svg"))
    graph.write(str(tmp_path / "g.dot"))
    assert (tmp_path / "g.dot").read_text() == graph.to_dot()
    assert "<svg" in (tmp_path / "g.svg").read_text()

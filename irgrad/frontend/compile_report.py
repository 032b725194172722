"""One self-contained HTML page describing a compile (issue 25 part 2).

`render_report` is a pure function: the IR text after each stage (or pass), the seconds each
took, op counts, optional graph pictures and the cache outcome -> one HTML string with inline
CSS and a few lines of inline JS for stage tabs. No server, no network, no CDN: the page opens
from disk in any browser. The tab named in `location.hash` (`#stage=NAME`) is shown on load,
and script errors are written into `#errors`, so a headless browser can check both."""

from __future__ import annotations

import difflib
import html
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

_OP = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*\.[\w.$]+)"?')

_CSS = """body{font-family:sans-serif;margin:1em}nav button{margin:2px;padding:4px 8px}
nav button.active{background:#246;color:#fff}section.stage{display:none}section.stage.shown{display:block}
pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}.add{background:#dfd}.del{background:#fdd}
#errors{color:#a00}"""

_JS = """window.onerror=function(m,s,l){document.getElementById('errors').textContent+='error: '+m+' line '+l+'\\n';};
function show(name){var found=false;document.querySelectorAll('section.stage').forEach(function(s){
var on=s.dataset.stage===name;s.classList.toggle('shown',on);s.hidden=!on;found=found||on;});
document.querySelectorAll('nav button').forEach(function(b){b.classList.toggle('active',b.dataset.stage===name);});
document.body.dataset.shown=found?name:'';document.title='irgrad report: '+name;}
document.querySelectorAll('nav button').forEach(function(b){b.onclick=function(){location.hash='stage='+b.dataset.stage;show(b.dataset.stage);};});
var m=/stage=([^&]+)/.exec(location.hash);var first=document.querySelector('section.stage');
show(m?decodeURIComponent(m[1]):(first?first.dataset.stage:''));"""


def op_counts(ir_text: str) -> Counter[str]:
    """Ops named in generic or custom form, one per line of printed IR (`%x = arith.addf ...`)."""
    counts: Counter[str] = Counter()
    for line in ir_text.splitlines():
        match = _OP.match(line)
        if match:
            counts[match.group(1)] += 1
    return counts


def _diff(before: str, after: str, name: str, previous: str) -> str:
    lines = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), previous, name, lineterm="", n=2):
        cls = "add" if line.startswith("+") and not line.startswith("+++") else ""
        cls = "del" if line.startswith("-") and not line.startswith("---") else cls
        lines.append(f'<span class="{cls}">{html.escape(line)}</span>' if cls else html.escape(line))
    return "\n".join(lines) if lines else "(no change)"


def render_report(
    title: str,
    stages: Mapping[str, str],
    seconds: Mapping[str, float] | None = None,
    pictures: Mapping[str, str] | None = None,
    cache: str | None = None,
    notes: list[str] | None = None,
) -> str:
    """The page. `stages`: name -> IR text, in pipeline order; `seconds`: name -> time (stages,
    passes or other phases such as codegen); `pictures`: stage -> inline SVG text, or DOT text
    when it starts with "digraph" (then shown as text, with a note that graphviz is absent);
    `cache`: the cache outcome and why; `notes`: lines shown at the top."""
    seconds, pictures = dict(seconds or {}), dict(pictures or {})
    esc = html.escape
    head = [f"<h1>{esc(title)}</h1>", '<pre id="errors"></pre>']
    if cache:
        head.append(f'<p id="cache">cache: {esc(cache)}</p>')
    head += [f'<p class="note">{esc(n)}</p>' for n in notes or []]
    if seconds:
        rows = "".join(f"<tr><td>{esc(k)}</td><td>{v * 1e3:.3f}</td></tr>" for k, v in seconds.items())
        head.append(f'<table id="timings"><tr><th>phase</th><th>ms</th></tr>{rows}</table>')
    counts = {name: op_counts(text) for name, text in stages.items()}
    if counts:
        rows = "".join(
            f"<tr><td>{esc(n)}</td><td>{sum(c.values())}</td><td>"
            + esc(", ".join(f"{op} {k}" for op, k in c.most_common(8)))
            + "</td></tr>"
            for n, c in counts.items()
        )
        head.append(f'<table id="opcounts"><tr><th>stage</th><th>ops</th><th>most common</th></tr>{rows}</table>')
    nav, sections, previous = [], [], None
    for name, text in stages.items():
        attr = esc(name, quote=True)
        nav.append(f'<button data-stage="{attr}">{esc(name)}</button>')
        body = [f"<h2>{esc(name)}</h2>"]
        if name in seconds:
            body.append(f"<p>time: {seconds[name] * 1e3:.3f} ms</p>")
        picture = pictures.get(name)
        if picture is not None:
            if picture.lstrip().startswith("<"):
                body.append(f'<div class="graph">{picture}</div>')
            else:
                body.append(f'<p class="note">graphviz not installed: the graph as DOT</p><pre class="dot">{esc(picture)}</pre>')
        if previous is not None:
            diff = _diff(stages[previous], text, name, previous)
            body.append(f'<details class="diff" open><summary>diff to {esc(previous)}</summary><pre>{diff}</pre></details>')
        body.append(f'<details class="ir"><summary>IR</summary><pre>{esc(text)}</pre></details>')
        sections.append(f'<section class="stage" data-stage="{attr}">' + "".join(body) + "</section>")
        previous = name
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{esc(title)}</title><style>{_CSS}</style></head>'
        f"<body>{''.join(head)}<nav>{''.join(nav)}</nav>{''.join(sections)}<script>{_JS}</script></body></html>\n"
    )


def write_report(path: str | Path, page: str) -> None:
    """Write the page, naming the path in the error when it cannot be written."""
    try:
        Path(path).write_text(page, encoding="utf-8")
    except OSError as err:
        raise OSError(f"report: cannot write {path}: {err.strerror or err}") from None


def _picture(lowered: object, stage: str) -> str | None:
    from irgrad.analysis.op_graph import GraphvizNotFoundError

    try:
        graph = lowered.graph(stage)  # type: ignore[attr-defined]
    except ValueError:
        return None
    try:
        svg = graph.to_svg()
    except (GraphvizNotFoundError, RuntimeError):
        return graph.to_dot()
    return svg[svg.find("<svg") :] if "<svg" in svg else svg


def jit_report(name: str, lowered: object | None, stats: Mapping[str, float], cache: str, nn_text: str) -> str:
    """The page for one compile of a jitted function: every stage kept by `lowered` (a Lowered
    with keep_stages=True), or only the traced IR (`nn_text`) when the disk cache answered."""
    from irgrad.frontend.stages import STAGE_NAMES

    notes: list[str] = []
    if lowered is None:
        stages, pictures = {"nn": nn_text}, {}
        notes.append("the compiled code came from the disk cache: no stage after tracing was run, so only the traced IR is shown")
    else:
        stages = {s: lowered.as_text(s) for s in STAGE_NAMES}  # type: ignore[attr-defined]
        pictures = {s: p for s in STAGE_NAMES[:-1] if (p := _picture(lowered, s)) is not None}
        pass_texts = getattr(lowered, "pass_texts", {})
        if pass_texts:  # every pass in order, between the traced IR and LLVM's
            stages = {"nn": stages["nn"], **pass_texts, "llvm-ir": stages["llvm-ir"]}
            stats = {**stats, **getattr(lowered, "pass_seconds", {})}
    return render_report(f"irgrad compile report: {name}", stages, stats, pictures, cache, notes)

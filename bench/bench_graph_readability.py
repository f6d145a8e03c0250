"""Graph view readability vs Netron, and the view's first-paint and pan/zoom figures, in one run.

Readability, per model (tiny-clip, tiny-qwen2-vl and its split parts, the 5,030-node synthetic transformer):
the native view at Fit as it opens (models above 200 nodes: collapsed module groups), the same with every group
open, and Netron's own (dagre) layout of the same file, read back from its SVG after it has rendered (node
``g`` transforms and border boxes, edge ``path`` data). For each: boxes drawn, edge crossings (pairs of drawn
edges whose curves, sampled into polylines, cross; pairs sharing an end node left out; bench/graph_metrics.py),
total edge length, bounding-box aspect ratio and the zoom Fit gives in a 1280x800 viewport.

Performance, side by side: first paint of a generated 10,000-node transformer (bench/graph_models.py) opened
collapsed, with all groups open, and flat (grouped=False); a 100,000-node one opened collapsed; pan and zoom
frame times (full-viewport repaints) on the 10k model collapsed and with all groups open.

    QT_QPA_PLATFORM=offscreen nice .venv/bin/python -m bench.bench_graph_readability [--no-netron] [--write]

Sample models are exported once into ``--work`` (default /tmp/studio-bench-readability) with ``studio
sample-model`` and ``studio export`` (no downloads) and reused by later runs. ``--write`` puts the tables into
BENCHMARKS.md (section "Graph view: readability vs Netron", replaced when it is there).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from studio.gui.inspector.netron_view import prepare_environment  # noqa: E402

prepare_environment()
try:  # QtWebEngine wants to be imported before the QApplication exists
    import PySide6.QtWebEngineWidgets  # noqa: F401
except ImportError:
    pass

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from PySide6.QtCore import QCoreApplication, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from bench.graph_metrics import (  # noqa: E402
    attach_ends,
    bounding_box,
    count_crossings,
    native_edge_polyline,
    svg_path_polyline,
    total_length,
)
from bench.graph_models import transformer_like  # noqa: E402
from studio.gui.graph.model import KIND_OP, GraphData, graph_from_onnx  # noqa: E402
from studio.gui.graph.view import GraphView  # noqa: E402

VIEW = (1280, 800)
SECTION = "## Graph view: readability vs Netron"
STUDIO = str(Path(sys.executable).with_name("studio"))


@dataclass
class Drawing:
    """What one layout draws: boxes (x0, y0, x1, y1), edges as polyline parts, each edge's end boxes."""

    boxes: list[tuple[float, float, float, float]]
    edges: list[list[list[tuple[float, float]]]]
    ends: list[tuple[int, int]]
    cut: int = 0  # native: long edges drawn as two stubs
    frames: list[tuple[float, float, float, float]] | None = None
    seconds: float = 0.0  # time to lay out (native: set_graph / expand to layout ready; Netron: load to laid out)
    constant: list[bool] | None = None  # native: edges out of a Constant node (Netron folds those into consumers)

    def metrics(self) -> dict[str, float]:
        t = time.perf_counter()
        crossings = count_crossings(self.edges, self.ends)
        count_s = time.perf_counter() - t
        keep = [k for k in range(len(self.edges)) if not (self.constant and self.constant[k])]
        shared = count_crossings([self.edges[k] for k in keep], [self.ends[k] for k in keep])
        x0, y0, x1, y1 = bounding_box(self.boxes + (self.frames or []), self.edges)
        w, h = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
        fit = min(VIEW[0] / w, VIEW[1] / h)
        box_h = float(np.median([b[3] - b[1] for b in self.boxes])) if self.boxes else 0.0
        length = total_length(self.edges)
        return {"boxes": len(self.boxes), "edges": len(self.edges), "crossings": crossings, "shared": shared,
                "shared_edges": len(keep), "length": length,
                "length_boxes": length / box_h if box_h else 0.0, "aspect": w / h, "width": w, "height": h,
                "fit": fit, "box_px": fit * box_h, "cut": self.cut, "count_s": count_s, "seconds": self.seconds}


# ---- models ------------------------------------------------------------------------------------------------
def _export(work: Path, sample: str, out: Path, split: bool) -> None:
    src = work / f"{sample}-src"
    if not (src / "config.json").exists():
        subprocess.run([STUDIO, "sample-model", sample, "--out", str(src)], check=True, stdout=subprocess.DEVNULL)
    cmd = [STUDIO, "export", str(src), "--output", str(out), "-q"] + (["--split-modalities"] if split else [])
    subprocess.run(cmd, check=True)


def sample_models(work: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """(label, path) of the models to compare, exporting what is missing; and notes on what failed."""
    work.mkdir(parents=True, exist_ok=True)
    out: list[tuple[str, Path]] = []
    notes: list[str] = []
    clip = work / "clip" / "clip.onnx"
    qwen = work / "qwen" / "qwen.onnx"
    for sample, path, split in (("tiny-clip", clip, False), ("tiny-qwen2-vl", qwen, True)):
        if not path.exists():
            t = time.perf_counter()
            try:
                _export(work, sample, path, split)
                print(f"exported {sample} in {time.perf_counter() - t:.0f} s")
            except subprocess.CalledProcessError as exc:
                notes.append(f"{sample}: export failed ({exc}); left out")
                continue
    if clip.exists():
        out.append(("tiny-clip", clip))
    if qwen.exists():
        out.append(("tiny-qwen2-vl", qwen))
        out += [(f"tiny-qwen2-vl {p}", qwen.with_name(f"qwen.{p}.onnx")) for p in ("vision", "decoder", "text")
                if qwen.with_name(f"qwen.{p}.onnx").exists()]
    for name, layers in (("synthetic transformer", 152), ("synthetic transformer, 38 layers", 38)):
        synth = work / f"synthetic_{layers}.onnx"
        if not synth.exists():
            from studio.inspect.synthetic import save_transformer

            save_transformer(synth, layers=layers, hidden=32, heads=4, vocab=1000, max_pos=128)
        out.append((name, synth))
    return out, notes


# ---- the native view ---------------------------------------------------------------------------------------
def _wait(cond: Any, timeout: float = 600.0) -> None:
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("layout not ready")
        QCoreApplication.processEvents()
        time.sleep(0.002)


def _new_view() -> GraphView:
    view = GraphView(theme="light")
    view.resize(*VIEW)
    view.show()
    QCoreApplication.processEvents()
    return view


def _close(view: GraphView) -> None:
    view.wait_idle()
    view.close()
    view.deleteLater()
    QCoreApplication.processEvents()


def open_view(graph: GraphData, grouped: bool | None = None) -> tuple[GraphView, float]:
    """A view showing ``graph`` as the app opens it; seconds from set_graph to the first full paint."""
    view = _new_view()
    t0 = time.perf_counter()
    view.set_graph(graph, grouped=grouped)
    _wait(lambda: view.ready)
    view.viewport().grab()
    return view, time.perf_counter() - t0


def expand_all(view: GraphView) -> float:
    """Open every group; seconds to the repaint with the new layout."""
    done: list[bool] = []
    view.sig_layout_ready.connect(lambda _g: done.append(True))
    t0 = time.perf_counter()
    if not view.expand_all():
        return 0.0
    _wait(lambda: bool(done))
    view.fit_all()
    view.viewport().grab()
    return time.perf_counter() - t0


def native_drawing(view: GraphView, seconds: float) -> Drawing:
    assert view.gscene is not None
    lay = view.gscene.geometry.layout
    x0, y0, x1, y1 = lay.x - lay.w / 2, lay.y - lay.h / 2, lay.x + lay.w / 2, lay.y + lay.h / 2
    boxes = list(zip(x0.tolist(), y0.tolist(), x1.tolist(), y1.tolist(), strict=True))
    edges = [[list(p[:2]), list(p[2:])] if cut else [native_edge_polyline(p)]
             for p, cut in zip(lay.edge_points, lay.edge_cut, strict=True)]
    frames = [(f.x0, f.y0, f.x1, f.y1) for f in lay.frames]
    assert view.graph is not None
    constant = [view.graph.nodes[s].op_type == "Constant" for s, _d in lay.edge_pairs]
    return Drawing(boxes, edges, list(lay.edge_pairs), sum(lay.edge_cut), frames, seconds, constant)


# ---- Netron ------------------------------------------------------------------------------------------------
_STATE_JS = """(function () {
  var g = document.getElementById('nodes'); if (!g) { return '[0, 0, 0, 0]'; }
  var placed = 0, drawn = 0, ns = g.children, ep = document.querySelectorAll('#edge-paths > path');
  for (var i = 0; i < ns.length; i++) { if (ns[i].getAttribute('transform')) { placed++; } }
  for (var j = 0; j < ep.length; j++) { if (ep[j].getAttribute('d')) { drawn++; } }
  return JSON.stringify([ns.length, placed, ep.length, drawn]);
})()"""
_READ_JS = r"""(function () {
  var out = {nodes: [], edges: []}, ns = document.getElementById('nodes').children;
  for (var i = 0; i < ns.length; i++) {
    var e = ns[i], m = /translate\(\s*([-\d.e+]+)[ ,]+([-\d.e+]+)\s*\)/.exec(e.getAttribute('transform') || '');
    var b = e.querySelector(':scope > path.node-border') || e, bb = b.getBBox();
    var tx = m ? +m[1] : 0, ty = m ? +m[2] : 0;
    out.nodes.push([e.id || '', tx + bb.x, ty + bb.y, tx + bb.x + bb.width, ty + bb.y + bb.height]);
  }
  var ep = document.querySelectorAll('#edge-paths > path');
  for (var j = 0; j < ep.length; j++) { out.edges.push([ep[j].id || '', ep[j].getAttribute('d') || '']); }
  return JSON.stringify(out);
})()"""


def netron_drawing(path: Path, timeout: float = 400.0) -> tuple[Drawing | None, str]:
    """Netron's layout of ``path`` read back from its SVG once every node is placed and every edge drawn."""
    from studio.gui.inspector.netron_view import NetronView, webengine_problem

    problem = webengine_problem()
    if problem:
        return None, problem
    view = NetronView(theme="light")
    view.resize(*VIEW)
    view.show()
    box: dict[str, Any] = {}
    t0 = time.perf_counter()
    view.load(path)
    last: list[int] = []
    asked = False  # a state query is out (a page busy laying out answers late)
    try:
        while time.perf_counter() - t0 < timeout and view.problem is None:
            if "state" in box:
                st = [int(v) for v in json.loads(box.pop("state") or "[0, 0, 0, 0]")]
                asked = False
                if st[0] and st[0] == st[1] and st[2] == st[3] and st == last:
                    break
                last = st
            if not asked and view.web is not None and view.is_ready:
                view.run_js(_STATE_JS, lambda v: box.__setitem__("state", v))
                asked = True
            for _ in range(25):
                QCoreApplication.processEvents()
                time.sleep(0.01)
        else:
            return None, view.problem or f"not laid out within {timeout:.0f} s (last state {last})"
        seconds = time.perf_counter() - t0
        view.run_js(_READ_JS, lambda v: box.__setitem__("data", v))
        _wait(lambda: "data" in box, 60)
    finally:
        view.shutdown()
        view.close()
        view.deleteLater()
        QCoreApplication.processEvents()
    data = json.loads(box["data"])
    boxes = [tuple(map(float, n[1:])) for n in data["nodes"]]
    edges = [parts for _id, d in data["edges"] if (parts := svg_path_polyline(d))]
    return Drawing(boxes, edges, attach_ends(edges, boxes), 0, None, seconds), ""  # type: ignore[arg-type]


# ---- performance -------------------------------------------------------------------------------------------
def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)] if xs else float("nan")


def pan_zoom(view: GraphView, steps: int) -> dict[str, tuple[float, float]]:
    """(median, p95) ms of full-viewport repaints: panning 60 px a frame at four zooms, and zoom steps."""
    assert view.gscene is not None
    rect = view.gscene.geometry.scene_rect
    out: dict[str, tuple[float, float]] = {}
    for label, scale in (("pan, zoom 1.0", 1.0), ("pan, zoom 0.5", 0.5), ("pan, zoom 0.15", 0.15),
                         ("pan, zoom 0.02", 0.02)):
        view.resetTransform()
        view.scale(scale, scale)
        view.sync_level_of_detail()
        view.centerOn(rect.center().x(), rect.top() + rect.height() * 0.3)
        view.viewport().grab()
        sb = view.verticalScrollBar()
        frames = []
        for _ in range(steps):
            sb.setValue(sb.value() + 60)
            t = time.perf_counter()
            view.viewport().grab()
            frames.append((time.perf_counter() - t) * 1000)
        out[label] = (statistics.median(frames), _p95(frames))
    view.fit_all()
    view.centerOn(rect.center())
    frames = []
    for k in range(steps):  # wheel-like steps in and out around the centre, through every level of detail
        t = time.perf_counter()
        view.zoom_by(1.25 if (k // 12) % 2 == 0 else 0.8)
        view.viewport().grab()
        frames.append((time.perf_counter() - t) * 1000)
    out["zoom steps x1.25"] = (statistics.median(frames), _p95(frames))
    return out


def opened_expanded(graph: GraphData) -> dict[str, float]:
    """The worker's pipeline with every group open, synchronous and timed part by part, then the scene and
    its first paint (set_geometry: the same drawing, without the roll-up texts)."""
    from studio.gui.graph.expansion import Expansion
    from studio.gui.graph.geometry import build_geometry

    view = _new_view()
    t0 = time.perf_counter()
    exp = Expansion.of(graph)
    exp.expand_all()
    t1 = time.perf_counter()
    vis = exp.visible()
    lay = exp.layout(vis)
    t2 = time.perf_counter()
    geometry = build_geometry(vis.graph, lay)
    view.set_geometry(geometry)
    view.viewport().grab()
    t3 = time.perf_counter()
    _close(view)
    return {"hierarchy": t1 - t0, "visible graph + compound layout": t2 - t1, "geometry + scene + paint": t3 - t2,
            "total": t3 - t0}


def performance(steps: int, runs: int, big: int) -> tuple[dict[str, float], dict[str, dict[str, tuple[float, float]]],
                                                         dict[str, int]]:
    times: dict[str, list[float]] = {}
    pans: dict[str, dict[str, tuple[float, float]]] = {}
    model = transformer_like(10_000)
    sizes = {"10k": len(model.graph.node)}
    for r in range(runs):
        t0 = time.perf_counter()
        graph = graph_from_onnx(model)
        g_s = time.perf_counter() - t0
        times.setdefault("10k: ONNX -> view data", []).append(g_s)
        view, s = open_view(graph)
        times.setdefault("10k collapsed: set_graph -> first paint", []).append(s)
        times.setdefault("10k collapsed: total", []).append(g_s + s)
        if r == 0:
            pans["10k collapsed"] = pan_zoom(view, steps)
        e = expand_all(view)
        times.setdefault("10k: open all groups (relayout + paint)", []).append(e)
        if r == 0:
            pans["10k all groups open"] = pan_zoom(view, steps)
        _close(view)
        view, s = open_view(graph, grouped=False)
        times.setdefault("10k flat (grouped=False): total", []).append(g_s + s)
        _close(view)
        for k, v in opened_expanded(graph).items():  # every group open from the start, part by part
            times.setdefault(f"10k all groups open from the start: {k}", []).append(v + (g_s if k == "total" else 0))
    big_model = transformer_like(big)
    sizes["big"] = len(big_model.graph.node)
    for _ in range(max(1, runs - 1)):
        t0 = time.perf_counter()
        graph = graph_from_onnx(big_model)
        g_s = time.perf_counter() - t0
        view, s = open_view(graph)
        times.setdefault("big: ONNX -> view data", []).append(g_s)
        times.setdefault("big collapsed: set_graph -> first paint", []).append(s)
        times.setdefault("big collapsed: total", []).append(g_s + s)
        _close(view)
        del graph
    return {k: statistics.median(v) for k, v in times.items()}, pans, sizes


# ---- report ------------------------------------------------------------------------------------------------
def _row(model: str, layout: str, m: dict[str, float]) -> str:
    return (f"| {model} | {layout} | {m['boxes']:,} | {m['edges']:,} | **{m['crossings']:,}** | "
            f"{m['shared']:,} ({m['shared_edges']:,}) | "
            f"{m['length'] / 1000:,.0f}k px ({m['length_boxes']:,.0f} box heights) | {m['aspect']:.3f} | "
            f"{m['fit']:.3f} ({m['box_px']:.1f} px) | {m['cut']:,} | {m['seconds']:.1f} s |")


def report(rows: list[tuple[str, str, dict[str, float]]], times: dict[str, float],
           pans: dict[str, dict[str, tuple[float, float]]], sizes: dict[str, int], load: tuple[float, float],
           notes: list[str], argv: str) -> str:
    lines = [SECTION, "",
             f"`QT_QPA_PLATFORM=offscreen nice .venv/bin/python -m bench.bench_graph_readability{argv}` (one run: "
             f"readability first, then performance; load average {load[0]:.1f} at the start, {load[1]:.1f} at most "
             "around the performance part; 2 cores shared with other jobs, so read seconds as +-50 %).", "",
             "Crossings: pairs of drawn edges whose curves (sampled, 8 pieces per cubic) properly cross, pairs "
             "sharing an end box left out; without Constant edges: the same over the edges Netron draws too (it "
             "folds Constant nodes into their consumers). Length in each layout's own pixels and in its median box height (the "
             "two draw boxes of different sizes). Aspect: bounding box width / height. Fit: the zoom that shows "
             f"the whole box in {VIEW[0]}x{VIEW[1]}, and a median box's height on screen at that zoom. Cut: long "
             "edges the native view draws as two labelled stubs (Netron routes every edge). Time: native, "
             "set_graph (or open all) to the first paint; Netron, load to every node placed and edge drawn.", "",
             "| model | layout | boxes | edges | crossings | crossings without Constant edges (edges) | "
             "total edge length | aspect | Fit zoom (box) | cut | time |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_row(*r) for r in rows]
    lines += ["", f"Performance: generated transformers (bench/graph_models.py), {sizes['10k']:,} and "
              f"{sizes['big']:,} ONNX nodes; first paint = ONNX -> view data + set_graph -> layout in the worker "
              "-> scene -> first full paint (median of the runs).", "",
              "| measure | figure | target |", "|---|---|---|"]
    targets = {"10k collapsed: total": "< 1 s", "10k all groups open from the start: total": "< 2 s",
               "10k flat (grouped=False): total": "< 2 s", "big collapsed: total": "< 3 s"}
    for k, v in times.items():
        label = k.replace("big", f"{sizes['big'] // 1000}k")
        bold = f"**{v:.2f} s**" if k in targets else f"{v:.2f} s"
        lines.append(f"| {label} | {bold} | {targets.get(k, '')} |")
    for where, d in pans.items():
        for label, (med, p95) in d.items():
            lines.append(f"| {where}, {label}: frame median / p95 | {med:.1f} / **{p95:.1f} ms** | p95 < 16 ms |")
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    body = path.read_text(encoding="utf-8")
    start = body.find(SECTION)
    if start < 0:
        body = body.rstrip("\n") + "\n\n" + text
    else:
        end = body.find("\n## ", start + len(SECTION))
        body = body[:start] + text + (body[end:] if end >= 0 else "")
    path.write_text(body, encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/studio-bench-readability"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--big", type=int, default=100_000, help="node count of the large model (default 100,000)")
    ap.add_argument("--no-netron", action="store_true")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated model labels to compare (default all)")
    ap.add_argument("--write", action="store_true", help="put the tables into BENCHMARKS.md")
    args = ap.parse_args()
    QApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QApplication.instance() or QApplication([])  # noqa: F841 (kept alive)
    load = os.getloadavg()[0]
    models, notes = sample_models(args.work)
    if args.only:
        models = [(label, p) for label, p in models if label in args.only.split(",")]
    rows: list[tuple[str, str, dict[str, float]]] = []
    for label, path in models:
        graph = graph_from_onnx(onnx.load(str(path), load_external_data=False))
        label = f"{label} ({sum(1 for n in graph.nodes if n.kind == KIND_OP):,} nodes)"
        view, s = open_view(graph)
        grouped = view.expansion is not None
        rows.append((label, "native, as opened (collapsed)" if grouped else "native (flat)",
                     native_drawing(view, s).metrics()))
        if grouped:
            e = expand_all(view)
            rows.append((label, "native, all groups open", native_drawing(view, e).metrics()))
        _close(view)
        view, s = open_view(graph, grouped=False)
        rows.append((label, "native flat (grouped=False)", native_drawing(view, s).metrics()))
        _close(view)
        if not args.no_netron:
            drawing, why = netron_drawing(path)
            if drawing is None:
                notes.append(f"Netron on {label}: {why}")
            else:
                rows.append((label, "Netron (dagre)", drawing.metrics()))
        for r in rows[-4:]:
            if r[0] == label:
                m = r[2]
                print(f"{label:40s} {r[1]:32s} boxes {m['boxes']:6,} crossings {m['crossings']:7,} "
                      f"(no Constants {m['shared']:6,}) "
                      f"length {m['length']:12,.0f} aspect {m['aspect']:.3f} fit {m['fit']:.3f} "
                      f"cut {m['cut']:4} time {m['seconds']:.1f}s (counted in {m['count_s']:.2f}s)", flush=True)
    times: dict[str, float] = {}
    pans: dict[str, dict[str, tuple[float, float]]] = {}
    sizes = {"10k": 0, "big": args.big}
    perf_load = 0.0
    if not args.no_perf:
        perf_load = os.getloadavg()[0]
        times, pans, sizes = performance(args.steps, args.runs, args.big)
        perf_load = max(perf_load, os.getloadavg()[0])
        for k, v in times.items():
            print(f"{k}: {v:.3f} s")
        for where, d in pans.items():
            for lab, (med, p95) in d.items():
                print(f"{where} {lab}: median {med:.1f} ms p95 {p95:.1f} ms")
    argv = "".join(f" {a}" for a in sys.argv[1:] if a != "--write")
    text = report(rows, times, pans, sizes, (load, perf_load), notes, argv)
    print(text)
    if args.write:
        write_section(text)
        print("BENCHMARKS.md updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Graph view benchmark: a generated 10,000-node transformer graph in the native view, and in Netron.

Measures, offscreen, in one process:
- time to first paint of the native view: ONNX -> GraphData, layered layout (igraph, worker side), tile
  geometry, scene build and the first full paint (``viewport().grab()``), each part and the total;
- frame time while panning: 100 scroll steps of 60 px at several zoom levels, each frame a full repaint of
  the viewport (grab), median and p95;
- Netron (the ``netron`` package in a QWebEngineView) time from load to the first rendered nodes, when
  QtWebEngine starts here.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_graph_view.py [--nodes 10000] [--no-netron] [--write]

``--write`` appends the figures and this command to BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from studio.gui.inspector.netron_view import prepare_environment  # noqa: E402

prepare_environment()
try:  # QtWebEngine wants to be imported before the QApplication exists
    import PySide6.QtWebEngineWidgets  # noqa: F401
except ImportError:
    pass

import onnx  # noqa: E402
from PySide6.QtCore import QCoreApplication, Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from bench.graph_models import transformer_like  # noqa: E402


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)] if xs else float("nan")


def first_paint(model: onnx.ModelProto, runs: int) -> dict[str, float]:
    """Synchronous pipeline, timed part by part (the app runs the same parts in worker threads)."""
    from studio.gui.graph.geometry import build_geometry
    from studio.gui.graph.layout import compute_layout
    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.graph.view import GraphView

    parts: dict[str, list[float]] = {k: [] for k in ("graph", "layout", "geometry", "scene", "paint", "total")}
    for _ in range(runs):
        view = GraphView(theme="light")
        view.resize(1280, 800)
        view.show()
        QCoreApplication.processEvents()
        t0 = time.perf_counter()
        graph = graph_from_onnx(model)
        t1 = time.perf_counter()
        layout = compute_layout(graph)
        t2 = time.perf_counter()
        geometry = build_geometry(graph, layout)
        t3 = time.perf_counter()
        view.set_geometry(geometry)
        t4 = time.perf_counter()
        view.viewport().grab()
        t5 = time.perf_counter()
        for k, v in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0), strict=True):
            parts[k].append(v)
        view.close()
        view.deleteLater()
        QCoreApplication.processEvents()
    return {k: _median(v) for k, v in parts.items()}


def async_first_paint(model: onnx.ModelProto) -> float:
    """The app's own path: set_graph lays out in a worker and hands back by a queued signal, then paint."""
    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.graph.view import GraphView

    view = GraphView(theme="light")
    view.resize(1280, 800)
    view.show()
    QCoreApplication.processEvents()
    graph = graph_from_onnx(model)
    t0 = time.perf_counter()
    view.set_graph(graph)
    while not view.ready:
        QCoreApplication.processEvents()
        time.sleep(0.002)
    view.viewport().grab()
    dt = time.perf_counter() - t0
    view.close()
    view.deleteLater()
    return dt


def pan_frames(model: onnx.ModelProto, steps: int) -> dict[str, dict[str, float]]:
    from studio.gui.graph.geometry import build_geometry
    from studio.gui.graph.layout import compute_layout
    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.graph.view import GraphView

    graph = graph_from_onnx(model)
    geometry = build_geometry(graph, compute_layout(graph))
    view = GraphView(theme="light")
    view.resize(1280, 800)
    view.show()
    view.set_geometry(geometry)
    # verdicts and dynamic edges on, as in the page
    verdicts = {n.name: ("supported", "risky", "unsupported", "supported", "unknown")[n.index % 5]
                for n in graph.nodes}
    view.set_verdicts(verdicts)
    view.set_dynamic({t for n in graph.nodes if n.op_type in ("Shape", "Gather", "Concat", "Reshape")
                      for t in n.outputs})
    out: dict[str, dict[str, float]] = {}
    rect = geometry.scene_rect
    for label, scale in (("zoom 1.0 (names, shapes)", 1.0), ("zoom 0.5 (op labels)", 0.5),
                         ("zoom 0.15 (boxes)", 0.15), ("zoom 0.02 (overview)", 0.02)):
        view.resetTransform()
        view.scale(scale, scale)
        view.sync_level_of_detail()
        view.centerOn(rect.center().x(), rect.top() + rect.height() * 0.3)
        view.viewport().grab()  # warm the tiles' paths for this area
        sb = view.verticalScrollBar()
        frames = []
        for _ in range(steps):
            sb.setValue(sb.value() + 60)
            t = time.perf_counter()
            view.viewport().grab()
            frames.append((time.perf_counter() - t) * 1000)
        out[label] = {"median_ms": _median(frames), "p95_ms": _p95(frames), "max_ms": max(frames)}
    view.close()
    return out


def netron_time(path: Path, timeout: float = 180.0) -> tuple[float | None, str]:
    from studio.gui.inspector.netron_view import NetronView, webengine_problem

    problem = webengine_problem()
    if problem:
        return None, problem
    view = NetronView(theme="light")
    view.resize(1280, 800)
    view.show()
    result: dict[str, float] = {}
    view.sig_ready.connect(lambda s: result.setdefault("s", s))
    t0 = time.perf_counter()
    view.load(path)
    while "s" not in result and view.problem is None and time.perf_counter() - t0 < timeout:
        QCoreApplication.processEvents()
        time.sleep(0.01)
    view.shutdown()
    if view.problem:
        return None, view.problem
    if "s" not in result:
        return None, f"not shown within {timeout:.0f} s"
    return result["s"], ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--no-netron", action="store_true")
    ap.add_argument("--write", action="store_true", help="append the figures to BENCHMARKS.md")
    args = ap.parse_args()

    QApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QApplication.instance() or QApplication([])  # noqa: F841 (kept alive)
    model = onnx.shape_inference.infer_shapes(transformer_like(args.nodes))
    n_nodes = len(model.graph.node)
    load = os.getloadavg()[0]
    print(f"graph: {n_nodes:,} nodes (generated transformer blocks), load average {load:.1f}")

    fp = first_paint(model, args.runs)
    print(f"native first paint (median of {args.runs} runs): "
          + ", ".join(f"{k} {v:.3f} s" for k, v in fp.items()))
    fa = async_first_paint(model)
    print(f"native first paint through the worker thread (layout + geometry + scene + paint): {fa:.3f} s")
    pans = pan_frames(model, args.steps)
    for label, d in pans.items():
        print(f"pan {label}: median {d['median_ms']:.1f} ms, p95 {d['p95_ms']:.1f} ms, max {d['max_ms']:.1f} ms")

    netron_s: float | None = None
    why = "skipped (--no-netron)"
    if not args.no_netron:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "transformer_10k.onnx"
            onnx.save(model, str(path))
            netron_s, why = netron_time(path)
        print(f"netron: {netron_s:.2f} s to first rendered nodes" if netron_s is not None else f"netron: {why}")

    if args.write:
        lines = [
            "",
            "## Graph view: 10,000-node graph, native view vs Netron",
            "",
            f"`QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_graph_view.py --nodes {args.nodes}`"
            f" ({n_nodes:,} ONNX nodes, a generated transformer; load average {load:.1f} during the run, "
            "2 shared cores).",
            "",
            "| measure | figure | target |",
            "|---|---|---|",
            f"| native first paint: ONNX -> view data | {fp['graph']:.2f} s | |",
            f"| native first paint: layered layout (igraph Sugiyama) | {fp['layout']:.2f} s | |",
            f"| native first paint: tile geometry + scene build | {fp['geometry'] + fp['scene']:.2f} s | |",
            f"| native first paint: first full paint | {fp['paint'] * 1000:.0f} ms | |",
            f"| **native time to first paint (all of the above)** | **{fp['total']:.2f} s** | < 2 s |",
            f"| native first paint via the worker thread (layout + scene + paint) | {fa:.2f} s | |",
        ]
        for label, d in pans.items():
            lines.append(f"| pan frame, {label}, full-viewport repaint | median {d['median_ms']:.1f} ms, "
                         f"p95 {d['p95_ms']:.1f} ms | < 50 ms |")
        if netron_s is not None:
            lines.append(f"| Netron in QtWebEngine, load to first rendered nodes | {netron_s:.1f} s "
                         f"({netron_s / fp['total']:.1f}x the native view) | |")
        else:
            lines.append(f"| Netron in QtWebEngine | not measured: {why} | |")
        with (ROOT / "BENCHMARKS.md").open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        print("appended to BENCHMARKS.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the graph view's label layer costs per frame: the same view repainted with the layer shown and hidden,
alternating in one process (the fairest floor: everything else the frame draws is the same).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_graph_labels.py [--nodes 10000] [--rounds 6]

Frames: zoom steps x1.25 from Fit (or 0.03, whichever is further out) up to the zoom where boxes carry their own text (every step places the
labels anew), and pans at zoom 0.3 and 0.1 (the placement is kept while the view stays in its region). A
generated transformer (bench/graph_models.py), collapsed as it opens and with every group open.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _wait(app, cond, timeout: float = 180.0) -> None:  # type: ignore[no-untyped-def]
    t = time.time()
    while not cond() and time.time() - t < timeout:
        app.processEvents()
        time.sleep(0.01)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    from bench.graph_models import transformer_like
    from studio.gui.graph.lod import LOD_LABEL
    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.graph.view import GraphView

    graph = graph_from_onnx(transformer_like(args.nodes))
    print(f"{len(graph.nodes):,} units, view 1280x800, {args.rounds} rounds alternating layer on / off")
    print("| graph | frames | layer hidden: median / p95 | layer shown: median / p95 | ratio of medians |")
    print("|---|---|---|---|---|")
    for state in ("collapsed", "all groups open"):
        view = GraphView(theme="light")
        view.resize(1280, 800)
        view.show()
        view.set_graph(graph)
        _wait(app, lambda v=view: v.ready)
        if state != "collapsed":
            done = [False]
            view.sig_layout_ready.connect(lambda *_a, d=done: d.__setitem__(0, True))
            view.expand_all()
            _wait(app, lambda d=done: d[0])
        for frames in ("zoom steps", "pans"):
            times: dict[bool, list[float]] = {True: [], False: []}
            for r in range(args.rounds):
                for shown in ((True, False) if r % 2 == 0 else (False, True)):
                    view.gscene.labels.setVisible(shown)
                    view.fit_all()
                    fit = view.zoom
                    steps = []
                    if frames == "zoom steps":
                        z = min(fit, 0.03)  # a collapsed graph fits at a readable zoom: start further out
                        while z < LOD_LABEL and len(steps) < 40:
                            steps.append(("zoom", z))
                            z *= 1.25
                    else:
                        steps = [("pan", z) for z in (0.3, 0.1) for _ in range(12)]
                    for kind, z in steps:
                        if kind == "zoom":
                            view.set_scale(z)
                        else:
                            if abs(view.zoom - z) > 1e-9:
                                view.set_scale(z)
                            bar = view.horizontalScrollBar()
                            bar.setValue(bar.value() + 60)
                        t = time.perf_counter()
                        view.viewport().repaint()
                        times[shown].append((time.perf_counter() - t) * 1000)
            off, on = sorted(times[False]), sorted(times[True])

            def fig(a: list[float]) -> str:
                return f"{statistics.median(a):.1f} / {a[int(0.95 * (len(a) - 1))]:.1f} ms"

            print(f"| {state} | {frames} (n={len(on)}) | {fig(off)} | {fig(on)} | "
                  f"{statistics.median(on) / max(statistics.median(off), 1e-9):.2f}x |")
        view.close()
        view.deleteLater()
        app.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main())

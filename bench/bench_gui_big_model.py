"""How long the GUI thread stalls while the Inspect page opens a model past 2 GB (graph + data file), inspects it
against every target and draws its graph.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_gui_big_model MODEL.onnx [--settle 3]

A 5 ms QTimer on the GUI thread stamps every time it fires; a stall is the gap between two stamps beyond the
interval (the event loop was busy or waiting for the GIL). Measured from ``open_model`` until both jobs (graph,
inspection) have finished, the layout is shown and ``--settle`` more seconds have passed, with a full paint of the
view after each change (``viewport().grab()``). Target (issue 29): no stall over 100 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", type=Path)
    ap.add_argument("--settle", type=float, default=3.0, help="seconds measured after everything is shown")
    args = ap.parse_args(argv)

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from studio.gui.jobs_qt import JobRunner
    from studio.gui.pages.inspect_page import InspectPage

    app = QApplication.instance() or QApplication(sys.argv)
    runner = JobRunner()
    page = InspectPage(jobs=runner)
    page.resize(1280, 800)
    page.show()
    app.processEvents()

    stamps: list[float] = []
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: stamps.append(time.perf_counter()))
    events: dict[str, float] = {}
    runner.sig_finished.connect(lambda h: events.setdefault(h.kind, time.perf_counter()))
    page.view.sig_layout_ready.connect(lambda *_: events.setdefault("layout", time.perf_counter()))
    timer.start()
    t0 = time.perf_counter()
    page.open_model(args.model)
    deadline = t0 + 600
    settled_at = None
    while time.perf_counter() < deadline:
        app.processEvents()
        busy = runner.running() or page.graph is None or page.report is None
        if not busy and settled_at is None:
            settled_at = time.perf_counter()
            page.view.viewport().grab()  # a full paint of what is shown
        if settled_at is not None and time.perf_counter() - settled_at > args.settle:
            break
        time.sleep(0.001)
    timer.stop()
    jobs_end = max((v for k, v in events.items() if k.startswith("inspect.")), default=settled_at or t0)
    gaps = [((b - a) * 1000 - 5, b) for a, b in zip(stamps, stamps[1:], strict=False)]
    during = [g for g, at in gaps if at <= jobs_end + 0.005]
    after = [g for g, at in gaps if at > jobs_end + 0.005]
    worst = max((g for g, _ in gaps), default=0.0)
    over = [g for g, _ in gaps if g > 100]
    print(f"model {args.model} ({sum(p.stat().st_size for p in args.model.parent.glob(args.model.name + '*')) / 1e9:.2f} GB"
          f" with its data file), {len(page.graph.nodes) if page.graph else 0} graph nodes")
    for k, v in sorted(events.items(), key=lambda kv: kv[1]):
        print(f"  {k}: {v - t0:.2f} s after open")
    print(f"  shown and inspected {((settled_at or time.perf_counter()) - t0):.2f} s after open; "
          f"timer ticks {len(stamps)}, median gap {statistics.median(g for g, _ in gaps) if gaps else 0:.1f} ms; "
          f"worst stall while the jobs ran {max(during, default=0):.0f} ms, after them (first paints of the graph "
          f"and the report) {max(after, default=0):.0f} ms; stalls over 100 ms: {len(over)}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    page.shutdown()
    runner.shutdown()
    return 0 if worst <= 100 else 1


if __name__ == "__main__":
    sys.exit(main())

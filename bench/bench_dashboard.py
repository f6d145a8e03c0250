"""Dashboards page redraw under load: 8 series fed 10,000 samples/s each, offscreen.

Reports frames/s (target >= 30) and the process RSS over the run (target: flat). Run 60 s by default,
``--minutes 10`` for the long check. A frame is counted only when the plots' viewport really painted
(a Paint event reached it, counted by an event filter): one ``redraw()`` (ring buffers -> decimated curves)
followed by ``processEvents()``, which lets Qt paint the scene offscreen, as the page's timer does.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_dashboard.py [--seconds 60 | --minutes 10]
    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_dashboard.py --ab REV [--rounds 8]

``--ab REV`` compares the page (and its ring buffers) as of git revision REV with the working tree's, both
in this one process, fed the same samples, in alternating 2-s slices: painted frames/s and GUI-thread CPU
time per painted frame, per slice, with the median ratio (the machine is shared, so only same-slice
comparisons mean anything).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _paint_counter() -> Any:
    """An event filter that counts the Paint events reaching the widget it is installed on (``.painted``)."""
    from PySide6.QtCore import QEvent, QObject

    class PaintCounter(QObject):
        painted = 0

        def eventFilter(self, obj: QObject, ev: QEvent) -> bool:  # noqa: N802 - Qt's name
            if ev.type() == QEvent.Type.Paint:
                self.painted += 1
            return False

    return PaintCounter()


def _series() -> list[str]:
    """The 8 series the bench feeds."""
    from studio.telemetry import samples as S

    return [S.LAT_P50, S.LAT_P95, S.LAT_P99, S.THROUGHPUT, S.SERVER_RPS, S.MEM_PCT, S.GPU_POWER, S.SLA_COMPLIANCE]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--rate", type=float, default=10_000.0, help="samples/s per series")
    ap.add_argument("--ab", metavar="REV", help="compare with the page as of this git revision, side by side")
    ap.add_argument("--rounds", type=int, default=8, help="--ab: alternating slices per page")
    args = ap.parse_args()
    if args.ab:
        return ab(args.ab, args.rounds, args.rate)
    seconds = args.minutes * 60 if args.minutes else args.seconds

    import numpy as np
    import psutil
    from PySide6.QtWidgets import QApplication

    from studio.gui.pages.dashboards_page import DashboardsPage

    app = QApplication.instance() or QApplication([])
    page = DashboardsPage()
    page.timer.stop()  # we drive frames ourselves, as fast as they go
    page.resize(1400, 900)
    page.show()

    counter = _paint_counter()
    page.glw.viewport().installEventFilter(counter)
    series = _series()
    stop = threading.Event()
    fed = [0]

    def feeder() -> None:
        rng = np.random.default_rng(0)
        period = 0.01
        per_batch = int(args.rate * period)
        t_next = time.perf_counter()
        while not stop.is_set():
            now = time.time()
            ts = now + np.arange(per_batch) * (period / per_batch)
            for i, name in enumerate(series):
                page.store.push_arrays("bench", name, "bench", ts, 10 + i + rng.standard_normal(per_batch))
            fed[0] += per_batch * len(series)
            t_next += period
            time.sleep(max(0.0, t_next - time.perf_counter()))

    proc = psutil.Process()
    th = threading.Thread(target=feeder, daemon=True)
    th.start()
    for _ in range(10):  # first layout and curve creation are not steady state
        page.redraw()
        app.processEvents()
    counter.painted = 0
    t0 = time.perf_counter()
    frames = 0
    rss: list[tuple[float, float]] = []
    next_mem = t0
    while time.perf_counter() - t0 < seconds:
        page.redraw()
        app.processEvents()
        frames += 1
        if time.perf_counter() >= next_mem:
            rss.append((time.perf_counter() - t0, proc.memory_info().rss / 2**20))
            next_mem += max(1.0, seconds / 20)
    elapsed = time.perf_counter() - t0
    stop.set()
    th.join()
    painted = counter.painted
    fps = min(frames, painted) / elapsed
    settled = [m for t, m in rss if t >= min(10.0, seconds / 3)]
    growth = (settled[-1] - settled[0]) if len(settled) > 1 else 0.0
    print(f"8 series x {args.rate:,.0f} samples/s for {elapsed:.0f} s: fed {fed[0] / elapsed:,.0f} samples/s, "
          f"{frames} redraws, {painted} viewport paints, {fps:.1f} frames/s (target >= 30)")
    print("RSS MiB over time: " + ", ".join(f"{t:.0f}s={m:.0f}" for t, m in rss))
    print(f"RSS growth after warm-up: {growth:+.1f} MiB (ring buffers hold {page.store.capacity:,} points/series)")
    return 0 if fps >= 30 else 1


def _baseline_page(rev: str) -> type:
    """DashboardsPage (with its PlotGrid and SeriesStore) as of ``rev``, imported from ``git show`` output."""
    import importlib
    import subprocess
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="dash-ab-"))
    # the page, its plot grid (where the curves are decimated) and its ring buffers, importing one another
    modules = {"ringbuffer": "studio/telemetry/ringbuffer.py", "plots": "studio/gui/dashboards/plots.py",
               "dashboards_page": "studio/gui/pages/dashboards_page.py"}
    for name, path in modules.items():
        src = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout
        for other, opath in modules.items():
            dotted = opath.removesuffix(".py").replace("/", ".")
            src = src.replace(f"from {dotted} import", f"from baseline_{other} import")
        (tmp / f"baseline_{name}.py").write_text(src)
    sys.path.insert(0, str(tmp))
    return importlib.import_module("baseline_dashboards_page").DashboardsPage


def ab(rev: str, rounds: int, rate: float) -> int:
    import statistics
    import threading

    import numpy as np
    from PySide6.QtWidgets import QApplication

    from studio.gui.pages.dashboards_page import DashboardsPage

    app = QApplication.instance() or QApplication([])
    pages = {rev: _baseline_page(rev)(), "tree": DashboardsPage()}
    counters = {}
    for k, p in pages.items():
        p.timer.stop()
        p.resize(1400, 900)
        p.show()
        counters[k] = _paint_counter()
        p.glw.viewport().installEventFilter(counters[k])
    series = _series()
    stop = threading.Event()

    def feeder() -> None:  # the same samples into both pages' stores
        rng = np.random.default_rng(0)
        per = int(rate * 0.01)
        t_next = time.perf_counter()
        while not stop.is_set():
            ts = time.time() + np.arange(per) * (0.01 / per)
            for i, name in enumerate(series):
                v = 10 + i + rng.standard_normal(per)
                for p in pages.values():
                    p.store.push_arrays("bench", name, "bench", ts, v)
            t_next += 0.01
            time.sleep(max(0.0, t_next - time.perf_counter()))

    threading.Thread(target=feeder, daemon=True).start()
    time.sleep(6.0)  # fill the ring buffers (50,000 points = 5 s at 10,000/s)
    fps: dict[str, list[float]] = {k: [] for k in pages}
    cpu: dict[str, list[float]] = {k: [] for k in pages}
    for r in range(rounds):
        for k in (list(pages) if r % 2 == 0 else list(pages)[::-1]):
            p, c = pages[k], counters[k]
            for _ in range(5):
                p.redraw()
                app.processEvents()
            c.painted = 0
            t0, c0 = time.perf_counter(), time.thread_time()
            while time.perf_counter() - t0 < 2.0:
                p.redraw()
                app.processEvents()
            fps[k].append(c.painted / (time.perf_counter() - t0))
            cpu[k].append(1e3 * (time.thread_time() - c0) / max(c.painted, 1))
    stop.set()
    med = statistics.median
    print(f"8 series x {rate:,.0f} samples/s, {rounds} alternating 2-s slices per page, one process")
    print("| page | painted frames/s (median) | GUI-thread CPU ms per frame (median) |\n|---|---|---|")
    for k in pages:
        print(f"| {k} | {med(fps[k]):.1f} | {med(cpu[k]):.2f} |")
    fr = [a / b for a, b in zip(fps["tree"], fps[rev], strict=True)]
    cr = [a / b for a, b in zip(cpu["tree"], cpu[rev], strict=True)]
    print(f"frames/s tree/{rev} per slice: {', '.join(f'{v:.2f}' for v in fr)}; median {med(fr):.2f}")
    print(f"CPU per frame tree/{rev} per slice: {', '.join(f'{v:.2f}' for v in cr)}; median {med(cr):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

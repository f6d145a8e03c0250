"""Dashboards page redraw under load: 8 series fed 10,000 samples/s each, offscreen.

Reports frames/s (target >= 30) and the process RSS over the run (target: flat). Run 60 s by default,
``--minutes 10`` for the long check.

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/bench_dashboard.py [--seconds 60 | --minutes 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--rate", type=float, default=10_000.0, help="samples/s per series")
    args = ap.parse_args()
    seconds = args.minutes * 60 if args.minutes else args.seconds

    import numpy as np
    import psutil
    from PySide6.QtWidgets import QApplication

    from studio.gui.pages.dashboards_page import DashboardsPage
    from studio.telemetry import samples as S

    app = QApplication.instance() or QApplication([])
    page = DashboardsPage()
    page.timer.stop()  # we drive frames ourselves, as fast as they go
    page.resize(1400, 900)
    page.show()
    series = [S.LAT_P50, S.LAT_P95, S.LAT_P99, S.THROUGHPUT, S.SERVER_RPS, S.MEM_PCT, S.GPU_POWER, S.SLA_COMPLIANCE]
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
    fps = frames / elapsed
    settled = [m for t, m in rss if t >= min(10.0, seconds / 3)]
    growth = (settled[-1] - settled[0]) if len(settled) > 1 else 0.0
    print(f"8 series x {args.rate:,.0f} samples/s for {elapsed:.0f} s: fed {fed[0] / elapsed:,.0f} samples/s, "
          f"{frames} frames, {fps:.1f} frames/s (target >= 30)")
    print("RSS MiB over time: " + ", ".join(f"{t:.0f}s={m:.0f}" for t, m in rss))
    print(f"RSS growth after warm-up: {growth:+.1f} MiB (ring buffers hold {page.store.capacity:,} points/series)")
    return 0 if fps >= 30 else 1


if __name__ == "__main__":
    sys.exit(main())

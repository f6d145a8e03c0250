"""The Locust master of `studio bench --locust` (``python -m studio.telemetry.locust_master CONFIG``).

A process of its own because locust monkey-patches the interpreter with gevent on import, which the studio's
threads (collectors, the Dashboards' job thread) must not see. It waits for its workers, starts one Locust user per
worker, hands each level out as a plan (rate share or user count, a shared wall-clock start so windows line up, and the
workload itself: server, request bytes, pool, timeout), merges window k of every worker (HDR histograms merged, counts summed), decides stability with the load
generator's own rule and prints one JSON line per merged window and per level on stdout for ``locust_run``.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from typing import Any

from studio.telemetry.histogram import LatencyHistogram


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Merger:
    """Window k of a level from every worker, merged; the level's drained tail and warm-up totals."""

    def __init__(self, n_workers: int) -> None:
        self.n = n_workers
        self.reset()

    def reset(self) -> None:
        self.parts: dict[int, list[dict[str, Any]]] = {}
        self.done: list[dict[str, Any]] = []
        self.closed = -1  # highest window index emitted
        self.stop_at: int | None = None

    def add(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        """Windows that every worker has now reported, in order, merged."""
        self.parts.setdefault(msg["index"], []).append(msg)
        out = []
        while len(self.parts.get(self.closed + 1, [])) == self.n and self.stop_at is None:
            self.closed += 1
            out.append(merge(self.parts.pop(self.closed)))
        return out


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    hist = LatencyHistogram()
    errors: Counter[str] = Counter()
    ticks: list[int] = []
    for p in parts:
        if p["hist"]:
            hist.merge(LatencyHistogram.decode(p["hist"]))
        errors.update(p["errors"])
        ticks = [a + b for a, b in zip(ticks, p["ticks"], strict=False)] if ticks else list(p["ticks"])
    ok = sum(p["ok"] for p in parts)
    out = {"index": parts[0]["index"], "ok": ok, "sent": sum(p["sent"] for p in parts),
           "errors": dict(errors), "bytes": sum(p["bytes"] for p in parts), "ticks": ticks,
           "hist": hist.encode().decode() if hist.count else "",
           "p50": hist.percentile_ms(50), "p99": hist.percentile_ms(99)}
    if all("t_open" in p for p in parts):  # workers of this studio: the span the counts cover, on their clocks
        out["t_open"] = min(p["t_open"] for p in parts)
        out["span_s"] = sum(p["t_close"] - p["t_open"] for p in parts) / len(parts)
        out["rps"] = ok / out["span_s"] if out["span_s"] > 0 else 0.0
    return out


def _stable(windows: list[dict[str, Any]], cfg: dict[str, Any]) -> bool:
    """The load generator's rule (load_types._stable) on merged windows: throughput, p50, p99 within +-pct."""
    n, pct = cfg["stability_windows"], cfg["stability_pct"]
    if len(windows) < n:
        return False
    last = windows[-n:]
    for key in ("rps" if "rps" in last[0] else "ok", "p50", "p99"):
        vals = [w[key] for w in last]
        if any(v is None for v in vals):
            return False
        mean = sum(vals) / n
        if mean <= 0 or any(abs(v - mean) > mean * pct / 100.0 for v in vals):
            return False
    return True


def run(cfg: dict[str, Any]) -> int:
    import gevent
    from locust import User, events, task
    from locust.env import Environment

    class KServeV2User(User):  # the master runs no users: this names the workers' class (locustfile) to spawn
        @task
        def drive(self) -> None:  # pragma: no cover - never run on the master
            raise NotImplementedError

    n = cfg["workers"]
    env = Environment(user_classes=[KServeV2User], events=events)
    runner = env.create_master_runner(cfg["bind_host"], cfg["port"])
    merger = Merger(n)
    state: dict[str, Any] = {"level": -1, "windows": [], "stop_sent": False}

    def stop_level(reason: str, stable: bool) -> None:
        if not state["stop_sent"]:
            state["stop_sent"] = True
            merger.stop_at = merger.closed
            runner.send_message("studio_stop", {"level": state["level"]})
            _emit({"type": "stopping", "level": state["level"], "reason": reason, "stable": stable})

    def on_window(environment: Any, msg: Any, **_kw: Any) -> None:
        data = msg.data
        if data["level"] != state["level"]:
            return
        if merger.stop_at is not None:  # drained after the stop: belongs to the last window, like the loadgen's
            merger.done.append(data)
            return
        for w in merger.add(data):
            state["windows"].append(w)
            _emit({"type": "window", "level": state["level"], **w})
            k = len(state["windows"])
            if w["ok"] == 0 and (w["sent"] or w["errors"]):
                stop_level(f"server stopped answering: no successful request in window {k}", False)
            elif k >= cfg["min_windows"] and (not cfg["stability"] or _stable(state["windows"], cfg)):
                stop_level("", _stable(state["windows"], cfg))
            elif k >= cfg["window_cap"]:
                stop_level("", False)

    def on_done(environment: Any, msg: Any, **_kw: Any) -> None:
        if msg.data["level"] == state["level"]:
            merger.done.append(dict(msg.data, done=True))

    runner.register_message("studio_window", on_window)
    runner.register_message("studio_done", on_done)
    deadline = time.time() + cfg["connect_timeout_s"]
    while len(runner.clients.ready) < n:
        if time.time() > deadline:
            _emit({"type": "error", "message": f"{len(runner.clients.ready)} of {n} Locust workers connected "
                                               f"within {cfg['connect_timeout_s']:g} s"})
            runner.quit()
            return 1
        gevent.sleep(0.05)
    runner.start(n, spawn_rate=n)  # one user per worker
    _emit({"type": "ready", "workers": n, "locust": __import__("locust").__version__})
    # the workload travels with every plan, so a worker on a lab host needs only the master's address
    workload = {k: cfg[k] for k in ("server_host", "server_port", "requests", "max_connections", "timeout_s")}
    for i, level in enumerate(cfg["levels"]):
        state.update(level=i, windows=[], stop_sent=False)
        merger.reset()
        start = time.time() + 0.5
        for w, client_id in enumerate(sorted(runner.clients.keys())):
            plan = {"level": i, "start": start, "warmup_s": cfg["warmup_s"], "window_s": cfg["window_s"],
                    "tick_s": cfg["tick_s"], "distribution": cfg["distribution"], "seed": 1000 * i + w,
                    "rate": level["rate"] / n if level.get("rate") else None,
                    # constant arrivals interleave: worker w's k-th request is due at start + (k*n + w) / rate, so
                    # the merged stream is the load generator's evenly spaced one, not n requests at once
                    "offset": w / level["rate"] if level.get("rate") else 0.0,
                    "users": level.get("users", 0) // n + (w < level.get("users", 0) % n), "workload": workload}
            runner.send_message("studio_level", plan, client_id=client_id)
        limit = start + cfg["warmup_s"] + cfg["window_s"] * (cfg["window_cap"] + 2) + cfg["timeout_s"] + 10
        while sum(1 for d in merger.done if d.get("done")) < n:
            if time.time() > limit:
                stop_level("workers did not finish the level in time", False)
                break
            gevent.sleep(0.02)
        pending = [p for parts in merger.parts.values() for p in parts]  # windows not every worker reached
        _emit({"type": "level", "level": i, "tail": merger.done + pending})
    runner.quit()
    gevent.sleep(0.2)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as fh:
        return run(json.load(fh))


if __name__ == "__main__":
    raise SystemExit(main())

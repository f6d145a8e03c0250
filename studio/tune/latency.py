"""Host latency, measured side by side: the FP32 original and every candidate that met the budget run in one
process, interleaved round by round (one call each per round), so a busy machine slows all of them alike and the
ratios stay fair. Each candidate runs in its target's own runtime on this host where there is one (ONNX Runtime,
TVM's compiled module, OpenVINO CPU); a target whose device is not here (a Rockchip NPU: its simulator is no
timer) is timed as its graph in ONNX Runtime on this host, and says so.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

Runner = Callable[[dict[str, Any]], Any]


def measure(runners: dict[str, Runner], feed: dict[str, Any], runs: int = 30, warmup: int = 3,
            job: Any = None) -> dict[str, float]:
    """Median milliseconds per runner over ``runs`` interleaved rounds."""
    for _ in range(warmup):
        for r in runners.values():
            r(feed)
    times: dict[str, list[float]] = {k: [] for k in runners}
    for i in range(runs):
        if job is not None and i % 5 == 0:
            job.check_cancelled()
        for k, r in runners.items():
            t0 = time.perf_counter()
            r(feed)
            times[k].append((time.perf_counter() - t0) * 1000.0)
    return {k: round(statistics.median(v), 4) for k, v in times.items() if v}


def ort_runner(model: Any, host: Any = None) -> Runner:
    """An ONNX Runtime CPU runner of a device graph (file path), with its host graph first when it has one."""
    from studio.core.runner import ort_session, session_options

    so = session_options(threads=1)
    dev = ort_session(model, so)
    pre = ort_session(host, so) if host else None
    dev_in = [i.name for i in dev.get_inputs()]
    if pre is None:
        return lambda feed: dev.run(None, {n: feed[n] for n in dev_in})
    pre_in = [i.name for i in pre.get_inputs()]
    pre_out = [o.name for o in pre.get_outputs()]

    def run(feed: dict[str, Any]) -> Any:
        made = dict(zip(pre_out, pre.run(None, {n: feed[n] for n in pre_in}), strict=True))
        both = {**feed, **made}
        return dev.run(None, {n: both[n] for n in dev_in})

    return run


def chained(host: Any, device_runner: Runner, device_inputs: list[str]) -> Runner:
    """A target runtime's runner (fed only ``device_inputs``) with the host graph (ONNX Runtime) in front."""
    if host is None:
        return lambda feed: device_runner({n: feed[n] for n in device_inputs})
    from studio.core.runner import ort_session, session_options

    pre = ort_session(host, session_options(threads=1))
    pre_in = [i.name for i in pre.get_inputs()]
    pre_out = [o.name for o in pre.get_outputs()]

    def run(feed: dict[str, Any]) -> Any:
        made = dict(zip(pre_out, pre.run(None, {n: feed[n] for n in pre_in}), strict=True))
        both = {**feed, **made}
        return device_runner({n: both[n] for n in device_inputs})

    return run

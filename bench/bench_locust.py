"""`studio bench --locust` (1 and 2 worker processes) vs the studio's single-process load generator: the highest
request rate each drives from this machine against one real edge agent (tiny MLP), closed loop, same concurrency,
side by side in one run.

    .venv/bin/python bench/bench_locust.py [--seconds 4] [--concurrency 8] [--rounds 3] [--append BENCHMARKS.md]
    .venv/bin/python bench/bench_locust.py --percentiles [--rate 200] [--seconds 2] [--rounds 5]
    .venv/bin/python bench/bench_locust.py --percentiles --model-ms 5 --rate 60 [...]

``--model-ms N``: serve a MatMul chain sized here (ONNX Runtime, 1 thread) to take about N ms per request instead of
the tiny MLP, on an agent started with ``--threads 1``: the comparison at a real model's latency, where a fixed
~0.2 ms of client cost per request is small. Keep the rate well under 1000 / N per core (queueing is the same for
both clients but its variance is not).

``--percentiles``: issue 18's check that Locust (2 workers) measures the same latency as the load generator at
the same open-loop rate: p50 / p90 per round, Locust / load generator ratios, their median (target within 10 %),
and the floor beside them: ``bench/floor_client.py``, one blocking socket in one process.
It is a timing comparison, so it lives here and not in the test suite.

Rounds rotate which client goes first; the ratios are per round and the reported figure is their median (the
shared machine's load drifts between rounds). Fair floor: every client uses the same KServe v2 request bodies
(studio.telemetry.kserve), the same concurrency and the same measured duration after the same warm-up; Locust's
process start and worker connection are not counted (the level's measured seconds are).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _agent(tmp: Path, model_ms: float | None = None):  # type: ignore[no-untyped-def]
    """A real agent serving "tiny" (tests/edge/helpers.make_mlp) or, with ``model_ms``, "mlpNms" (_make_slow)."""
    from tests.edge.helpers import PASSPHRASE, AgentProcess, deploy_tiny, dev_keys

    os.environ["STUDIO_KEY_PASSPHRASE"] = PASSPHRASE
    dev = dev_keys(tmp)
    extra = ["--log-level", "warning"] + (["--threads", "1"] if model_ms else [])
    agent = AgentProcess(tmp / "data", dev.trust, dev.token, extra=extra).start()
    if not model_ms:
        deploy_tiny(agent, dev, tmp)
        return agent, "tiny"
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle

    name = f"mlp{model_ms:g}ms".replace(".", "p")
    src = _make_slow(tmp / "src" / f"{name}.onnx", model_ms)
    bundle = build_bundle(src, "generic-x86_64", dev.signing_key, tmp / f"{name}.tar", version="1").bundle
    deploy_bundle(Path(bundle), agent.url, dev.token.read_text().strip())
    return agent, name


def _slow_graph(path: Path, layers: int, rows: int = 256, width: int = 256) -> Path:
    """x[batch,16] -> [batch,width], broadcast to [rows,batch,width], ``layers`` x (MatMul by one shared
    [width,width] weight, Tanh), mean over the rows, -> [batch,8]: compute that grows with ``layers`` while the file
    and the request / response bodies stay the tiny MLP's size."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from tests.edge.helpers import _save

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((16, width), np.float32) * 0.25, "W0"),
             numpy_helper.from_array(rng.standard_normal((width, width), np.float32) / width ** 0.5, "W"),
             numpy_helper.from_array(rng.standard_normal((width, 8), np.float32) * 0.1, "Wout"),
             numpy_helper.from_array(np.ones((rows, 1, 1), np.float32), "rows")]
    nodes = [helper.make_node("MatMul", ["x", "W0"], ["h0"]), helper.make_node("Mul", ["h0", "rows"], ["t0"])]
    for i in range(layers):
        nodes += [helper.make_node("MatMul", [f"t{i}", "W"], [f"m{i}"]), helper.make_node("Tanh", [f"m{i}"],
                                                                                         [f"t{i + 1}"])]
    nodes += [helper.make_node("ReduceMean", [f"t{layers}"], ["r"], axes=[0], keepdims=0),
              helper.make_node("MatMul", ["r", "Wout"], ["y"]), helper.make_node("Relu", ["y"], ["out"])]
    g = helper.make_graph(nodes, "slow_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8])], inits)
    return _save(g, path)


def _make_slow(path: Path, model_ms: float) -> Path:
    """_slow_graph with as many layers as take ~``model_ms`` per batch-1 request in ONNX Runtime at 1 thread here
    (calibrated on 1- and 5-layer graphs: median of 50 runs each)."""
    import numpy as np
    import onnxruntime as ort

    def per_run_ms(layers: int) -> float:
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(str(_slow_graph(path, layers)), opts, providers=["CPUExecutionProvider"])
        x = {"x": np.zeros((1, 16), np.float32)}
        ts = []
        for _ in range(55):
            t0 = time.perf_counter()
            sess.run(None, x)
            ts.append(time.perf_counter() - t0)
        return 1e3 * statistics.median(ts[5:])

    one, five = per_run_ms(1), per_run_ms(5)
    per_layer = max((five - one) / 4, 1e-3)
    layers = max(1, 1 + round((model_ms - one) / per_layer))
    print(f"model: {layers} layers (calibration: {one:.3f} ms at 1 layer, {five:.3f} ms at 5)", file=sys.stderr)
    return _slow_graph(path, layers)


def _run(url: str, client: str, seconds: float, conc: int, rate: float | None = None, model: str = "tiny"
         ) -> dict[str, float]:
    from functools import partial

    from studio.telemetry.bench import run_bench
    from studio.telemetry.load_types import LoadConfig
    from studio.telemetry.locust_run import LocustGenerator, LocustOptions

    cfg = LoadConfig(url=url, model=model, concurrency=[conc], rate=rate, duration_s=seconds, warmup_s=1.0,
                     window_s=seconds, stability=False)
    kw = {} if client == "loadgen" else {"generator": partial(LocustGenerator,
                                                              options=LocustOptions(workers=int(client[-1])))}
    lv = run_bench(cfg, **kw).levels[0]
    return {"rps": lv.throughput_rps, "p50": lv.latency.p50_ms or 0.0, "p90": lv.latency.p90_ms or 0.0,
            "p99": lv.latency.p99_ms or 0.0, "errors": lv.error_count,
            "delay_p50": (lv.send_delay.p50_ms or 0.0) if lv.send_delay else 0.0,
            "delay_p90": (lv.send_delay.p90_ms or 0.0) if lv.send_delay else 0.0}


def _floor(url: str, seconds: float, rate: float, model: str) -> dict[str, float]:
    """bench/floor_client.py (one blocking socket) in its own process, with the request bytes both clients send
    (built by the load generator's own ``prepare``)."""
    import base64
    import json
    import subprocess

    from studio.telemetry.load_types import LoadConfig
    from studio.telemetry.loadgen import LoadGenerator

    gen = LoadGenerator(LoadConfig(url=url, model=model, rate=rate, duration_s=seconds, warmup_s=1.0))
    gen.prepare()
    reqs = [base64.b64encode(r).decode() for r in gen.requests]
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "floor_client.py"), gen.ep.host, str(gen.ep.port),
                          str(rate), str(seconds), "1.0", json.dumps(reqs)], capture_output=True, text=True,
                         check=True)
    row = json.loads(out.stdout)
    return {**row, "rps": float("nan"), "delay_p50": float("nan"), "delay_p90": float("nan")}


def percentiles(args: argparse.Namespace) -> int:
    """Locust (2 workers) vs the load generator at one open-loop rate: median of per-round p50 / p90 ratios; the
    blocking-socket floor (bench/floor_client.py) beside them."""
    clients = ["loadgen", "locust-2", "floor"]
    rows: dict[str, list[dict[str, float]]] = {c: [] for c in clients}
    with tempfile.TemporaryDirectory(prefix="bench-locust-") as d:
        agent, model = _agent(Path(d), args.model_ms)
        try:
            for r in range(args.rounds):
                for c in clients[r % 3:] + clients[:r % 3]:
                    rows[c].append(_floor(agent.url, args.seconds, args.rate, model) if c == "floor" else
                                   _run(agent.url, c, args.seconds, 1, rate=args.rate, model=model))
                    print(f"round {r + 1} {c}: {rows[c][-1]}", file=sys.stderr)
        finally:
            agent.stop()

    def med_ratio(c: str, k: str) -> float:
        return statistics.median(a[k] / b[k] for a, b in zip(rows[c], rows["loadgen"], strict=True))

    ratio = {k: med_ratio("locust-2", k) for k in ("p50", "p90")}
    met = all(abs(v - 1) <= 0.10 for v in ratio.values())
    size = (f" --model-ms {args.model_ms:g}" if args.model_ms else "")
    what = (f"model {model} (ONNX Runtime, agent --threads 1)" if args.model_ms else "tiny MLP")
    lines = [f"Command: `.venv/bin/python bench/bench_locust.py --percentiles{size} --rate {args.rate:g} --seconds "
             f"{args.seconds:g} --rounds {args.rounds}` ({time.strftime('%Y-%m-%d %H:%M')}, load average "
             f"{os.getloadavg()[0]:.1f} at the end). Real edge agent, {what}, open loop at {args.rate:g} req/s, "
             "rounds alternating which client goes first.", "",
             "| client | p50 ms | p90 ms | send delay vs due time: p50 ms | p90 ms | errors |",
             "|---|---|---|---|---|---|"]
    for c, xs in rows.items():
        med = {k: statistics.median(x[k] for x in xs) for k in ("p50", "p90", "delay_p50", "delay_p90")}
        delays = ("| - | - " if c == "floor" else f"| {med['delay_p50']:.3f} | {med['delay_p90']:.3f} ")
        lines.append(f"| {c} | {med['p50']:.3f} | {med['p90']:.3f} {delays}| {sum(int(x['errors']) for x in xs)} |")
    lines += ["", "Figures are medians over the rounds. floor: bench/floor_client.py, one blocking socket in one "
                  "process (the plainest client for the same measurement; it keeps up only at rates well under the "
                  "server's)."]
    lines += ["", f"Locust / load generator, median of per-round ratios: p50 {ratio['p50']:.2f}, p90 "
                  f"{ratio['p90']:.2f} (target within 10 %: {'met' if met else 'not met'}). Floor / load "
                  f"generator: p50 {med_ratio('floor', 'p50'):.2f}, p90 {med_ratio('floor', 'p90'):.2f}."]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with args.append.open("a", encoding="utf-8") as fh:
            fh.write("\n\n### Locust vs the load generator: latency at one open-loop rate\n\n" + text + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--append", type=Path, help="append the table to this markdown file")
    ap.add_argument("--percentiles", action="store_true", help="compare p50 / p90 at one open-loop --rate")
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--model-ms", type=float, help="--percentiles against a model taking about this many ms (1 thread)")
    args = ap.parse_args()
    if args.percentiles:
        return percentiles(args)
    clients = ["loadgen", "locust-1", "locust-2"]
    rows: dict[str, list[dict[str, float]]] = {c: [] for c in clients}
    with tempfile.TemporaryDirectory(prefix="bench-locust-") as d:
        agent, _ = _agent(Path(d))
        try:
            for r in range(args.rounds):
                order = clients[r % 3:] + clients[:r % 3]
                for c in order:
                    rows[c].append(_run(agent.url, c, args.seconds, args.concurrency))
                    print(f"round {r + 1} {c}: {rows[c][-1]}", file=sys.stderr)
        finally:
            agent.stop()
    ratios = {c: statistics.median(rows[c][i]["rps"] / rows["loadgen"][i]["rps"] for i in range(args.rounds))
              for c in clients}
    load = os.getloadavg()[0]
    lines = [f"Command: `.venv/bin/python bench/bench_locust.py --seconds {args.seconds:g} --concurrency "
             f"{args.concurrency} --rounds {args.rounds}` ({time.strftime('%Y-%m-%d %H:%M')}, load average "
             f"{load:.1f} at the end). Real edge agent, tiny MLP, closed loop at concurrency {args.concurrency}.",
             "", "| client | processes | requests/s (median) | p50 ms | p99 ms | rate vs load generator |",
             "|---|---|---|---|---|---|"]
    procs = {"loadgen": "1 (asyncio + httptools)", "locust-1": "master + 1 worker", "locust-2": "master + 2 workers"}
    for c in clients:
        med = {k: statistics.median(x[k] for x in rows[c]) for k in ("rps", "p50", "p99")}
        lines.append(f"| {c} | {procs[c]} | {med['rps']:.0f} | {med['p50']:.2f} | {med['p99']:.2f} | "
                     f"{ratios[c]:.2f}x |")
    text = "\n".join(lines)
    print(text)
    if args.append:
        with args.append.open("a", encoding="utf-8") as fh:
            fh.write("\n\n## Distributed load: Locust workers vs the studio's load generator (`bench/bench_locust.py`)"
                     "\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

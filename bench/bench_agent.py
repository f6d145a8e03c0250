"""Edge agent under load, and its latency overhead over bare ONNX Runtime next to the local Triton server's.

    .venv/bin/python -m bench.bench_agent [--clients 64] [--duration 60] [--requests 400] [--rounds 11] [--append]

One run, same machine, same model (a 16x8 MLP, batch 1), same client (tritonclient.http, binary tensors):
1. bare ``InferenceSession.run`` p50;
2. the agent at concurrency 1 and the local tritonserver (Python backend + ORT, studio.triton) at concurrency 1,
   both servers up at once and measured in alternating rounds (bare ORT, then agent and Triton, which of the
   two goes first alternating; ``--rounds`` times):
   p50 and p50 minus bare ORT (= what serving adds, client included for both), median over the rounds, and
   the overhead ratio agent/Triton per round (the machine is shared, so only same-round ratios compare);
3. the agent with N concurrent clients for D seconds: requests, errors, throughput, agent RSS sampled each second.

``--ab-tree DIR`` (a folder holding another studio/, e.g. ``git archive REV studio | tar -x -C DIR``) starts that
tree's agent too (``python -m studio.agent.cli`` run from DIR), deploys the same bundle to it and measures it in
every latency round beside this tree's agent, order alternating: the per-round ratio this/other is an A/B of a
refactor in one run.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _p(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q)) if values else float("nan")


def bare_ort(model: Path | object, x: np.ndarray, n: int) -> list[float]:
    import onnxruntime as ort

    s = model if isinstance(model, ort.InferenceSession) else ort.InferenceSession(
        str(model), providers=["CPUExecutionProvider"])
    for _ in range(200):
        s.run(None, {"x": x})
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        s.run(None, {"x": x})
        out.append(time.perf_counter() - t0)
    return out


def serial_client(url: str, model: str, x: np.ndarray, n: int) -> list[float]:
    import tritonclient.http as th

    c = th.InferenceServerClient(url)
    i = th.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    outs = [th.InferRequestedOutput("out")]
    for _ in range(200):
        c.infer(model, [i], outputs=outs)
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        c.infer(model, [i], outputs=outs)
        lat.append(time.perf_counter() - t0)
    c.close()
    return lat


def load(url: str, model: str, x: np.ndarray, clients: int, duration: float, pid: int) -> dict:
    import psutil
    import tritonclient.http as th

    ok = [0] * clients
    errors: list[str] = []
    lat: list[list[float]] = [[] for _ in range(clients)]
    stop = threading.Event()
    expected = None

    def worker(k: int) -> None:
        c = th.InferenceServerClient(url, connection_timeout=30, network_timeout=30)
        i = th.InferInput("x", list(x.shape), "FP32")
        i.set_data_from_numpy(x)
        outs = [th.InferRequestedOutput("out")]
        while not stop.is_set():
            t0 = time.perf_counter()
            try:
                r = c.infer(model, [i], outputs=outs).as_numpy("out")
                if expected is not None and not np.allclose(r, expected, atol=1e-5):
                    errors.append("wrong answer")
                else:
                    ok[k] += 1
                    lat[k].append(time.perf_counter() - t0)
            except Exception as exc:
                errors.append(repr(exc)[:200])
        c.close()

    proc = psutil.Process(pid)
    rss: list[int] = [proc.memory_info().rss]
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    while time.perf_counter() - t0 < duration:
        time.sleep(1.0)
        rss.append(proc.memory_info().rss)
    stop.set()
    for t in threads:
        t.join(60)
    wall = time.perf_counter() - t0
    flat = [v for li in lat for v in li]
    return {"requests": sum(ok), "errors": len(errors), "first_errors": errors[:3], "wall_s": wall,
            "rps": sum(ok) / wall, "p50_ms": _p(flat, 50) * 1e3, "p99_ms": _p(flat, 99) * 1e3,
            "rss_start_mb": rss[0] / 2**20, "rss_peak_mb": max(rss) / 2**20, "rss_end_mb": rss[-1] / 2**20,
            "rss_second_half_growth_mb": (rss[-1] - rss[len(rss) // 2]) / 2**20}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--requests", type=int, default=400, help="requests per round and path at concurrency 1")
    ap.add_argument("--rounds", type=int, default=11, help="alternating rounds of ORT / agent / Triton")
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--ab-tree", type=Path, default=None, help="a folder holding another studio/ to A/B against")
    ap.add_argument("--append", action="store_true", help="append the result to BENCHMARKS.md")
    args = ap.parse_args()

    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle
    from studio.package.keys import KeyStore
    from tests.edge.helpers import AgentProcess, make_mlp

    tmp = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    model = make_mlp(tmp / "src" / "mlp.onnx")
    store = KeyStore(tmp / "keys")
    store.generate("bench", "bench-pass")
    bundle = build_bundle(model, "generic-x86_64", store.load_signing_key("bench", "bench-pass"), tmp / "b.tar",
                          version="1")
    (tmp / "trust.pub").write_text(store.export_public("bench") + "\n")
    (tmp / "token").write_text(secrets.token_urlsafe(32))
    x = np.random.default_rng(0).random((1, 16), dtype=np.float32)
    agent = AgentProcess(tmp / "data", tmp / "trust.pub", tmp / "token", extra=["--log-level", "warning"]).start()
    res: dict = {}
    triton = other = None
    try:
        deploy_bundle(bundle.bundle, agent.url, (tmp / "token").read_text())
        url = f"127.0.0.1:{agent.port}"
        if args.ab_tree is not None:
            other = AgentProcess(tmp / "data-ab", tmp / "trust.pub", tmp / "token", cwd=args.ab_tree.resolve(),
                                 extra=["--log-level", "warning"]).start()
            deploy_bundle(bundle.bundle, other.url, (tmp / "token").read_text())
            res["ab"] = ab_rounds(x, url, f"127.0.0.1:{other.port}", args.requests, args.rounds)
        triton_url = None
        if not args.no_triton:
            try:
                triton, triton_url = _triton_start(model, tmp)
            except Exception as exc:  # report the agent side regardless
                res["triton_error"] = f"{type(exc).__name__}: {exc}"[:300]
        res.update(latency_rounds(model, x, url, triton_url, args.requests, args.rounds))
        if args.duration > 0:
            res["load"] = load(url, "mlp", x, args.clients, args.duration, agent.proc.pid)
    finally:
        agent.stop()
        if other is not None:
            other.stop()
        if triton is not None:
            triton.__exit__(None, None, None)
    text = render(res, args)
    print(text)
    if args.append:
        with open(ROOT / "BENCHMARKS.md", "a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0 if "load" not in res or res["load"]["errors"] == 0 else 1


def _triton_start(model: Path, tmp: Path) -> tuple[object, str]:
    from studio.triton.repo_builder import BuildOptions, build_repo
    from studio.triton.server import LocalTritonServer

    build_repo(BuildOptions(model=model, repo=tmp / "repo", name="mlp", flavor="python", max_batch_size=0))
    srv = LocalTritonServer(tmp / "repo", load_models=["mlp"])
    srv.__enter__()
    try:
        srv.wait_ready()
    except BaseException:
        srv.__exit__(None, None, None)
        raise
    return srv, f"127.0.0.1:{srv.http_port}"


def latency_rounds(model: Path, x: np.ndarray, agent_url: str, triton_url: str | None, n: int,
                   rounds: int) -> dict:
    """Alternate bare ORT / agent / Triton rounds; medians of the per-round p50s and per-round ratios."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    per: dict[str, list[float]] = {"ort": [], "agent": [], "agent99": [], "triton": [], "triton99": []}
    ratios: list[float] = []
    for r in range(rounds):
        o = _p(bare_ort(sess, x, n), 50) * 1e3
        t_lat = serial_client(triton_url, "mlp", x, n) if triton_url and r % 2 else None  # alternate who goes first
        a_lat = serial_client(agent_url, "mlp", x, n)
        a, a99 = _p(a_lat, 50) * 1e3, _p(a_lat, 99) * 1e3
        per["ort"].append(o)
        per["agent"].append(a)
        per["agent99"].append(a99)
        if triton_url:
            if t_lat is None:
                t_lat = serial_client(triton_url, "mlp", x, n)
            t, t99 = _p(t_lat, 50) * 1e3, _p(t_lat, 99) * 1e3
            per["triton"].append(t)
            per["triton99"].append(t99)
            ratios.append((a - o) / (t - o))
        print(f"round: ort {o:.4f} agent {a:.3f}" + (f" triton {per['triton'][-1]:.3f} ratio {ratios[-1]:.2f}"
                                                      if triton_url else ""), file=sys.stderr, flush=True)
    med = lambda v: float(np.median(v))  # noqa: E731
    out = {"ort_p50_ms": med(per["ort"]), "agent_p50_ms": med(per["agent"]), "agent_p99_ms": med(per["agent99"]),
           "agent_rounds": per["agent"], "rounds": rounds}
    if triton_url:
        out.update(triton_p50_ms=med(per["triton"]), triton_p99_ms=med(per["triton99"]),
                   triton_rounds=per["triton"], ratios=ratios)
    return out


def ab_rounds(x: np.ndarray, url: str, other_url: str, n: int, rounds: int) -> dict:
    """This tree's agent against the other tree's, alternating who goes first; per-round p50 ratio this/other."""
    this, other = [], []
    for r in range(rounds):
        pair = [(this, url), (other, other_url)]
        for out, u in (pair if r % 2 else pair[::-1]):
            out.append(_p(serial_client(u, "mlp", x, n), 50) * 1e3)
        print(f"ab round: this {this[-1]:.3f} ms other {other[-1]:.3f} ms", file=sys.stderr, flush=True)
    ratios = [a / b for a, b in zip(this, other, strict=True)]
    return {"this_p50_ms": float(np.median(this)), "other_p50_ms": float(np.median(other)), "ratios": ratios}


def render(r: dict, args: argparse.Namespace) -> str:
    ld = r.get("load")
    lines = [f"## Edge agent: latency overhead and load ({time.strftime('%Y-%m-%d')})", "",
             "Command: `.venv/bin/python -m bench.bench_agent --clients "
             f"{args.clients} --duration {args.duration:g} --requests {args.requests} --rounds {args.rounds}"
             + (f" --ab-tree {args.ab_tree}" if args.ab_tree else "") + "`", "",
             "16x8 MLP (MatMul + Relu), batch 1, CPU; client `tritonclient.http` with binary tensors in the same "
             "process for both servers; overhead = client-side p50 minus bare `InferenceSession.run` p50. Both "
             f"servers up at once, {r['rounds']} alternating rounds of {args.requests} requests per path; "
             "figures are medians over the rounds.", "",
             "| path | p50 ms | p99 ms | p50 overhead over bare ORT (ms) |", "|---|---|---|---|",
             f"| bare ONNX Runtime `session.run` | {r['ort_p50_ms']:.4f} | | |",
             f"| studio-agent (HTTP, concurrency 1) | {r['agent_p50_ms']:.3f} | {r['agent_p99_ms']:.3f} | "
             f"{r['agent_p50_ms'] - r['ort_p50_ms']:.3f} |"]
    if "triton_p50_ms" in r:
        lines.append(f"| local tritonserver, Python backend + ORT (HTTP, concurrency 1) | {r['triton_p50_ms']:.3f} | "
                     f"{r['triton_p99_ms']:.3f} | {r['triton_p50_ms'] - r['ort_p50_ms']:.3f} |")
        rs = r["ratios"]
        lines += ["", f"Agent overhead / Triton overhead, per round: {', '.join(f'{v:.2f}' for v in rs)}; "
                      f"median **{float(np.median(rs)):.2f}x**"]
    elif "triton_error" in r:
        lines += ["", f"Triton side not measured: {r['triton_error']}"]
    if "ab" in r:
        ab = r["ab"]
        lines += ["", f"A/B against the agent of `{args.ab_tree}` (`--ab-tree`, {args.rounds} rounds of {args.requests} "
                      f"requests each, order alternating): p50 {ab['this_p50_ms']:.3f} ms here vs "
                      f"{ab['other_p50_ms']:.3f} ms there; this/other per round: "
                      f"{', '.join(f'{v:.2f}' for v in ab['ratios'])}; median **{float(np.median(ab['ratios'])):.3f}x**"]
    if ld is None:
        return "\n".join(lines)
    lines += ["", f"Load: {args.clients} concurrent clients for {ld['wall_s']:.0f} s: {ld['requests']} requests, "
                  f"**{ld['errors']} errors**, {ld['rps']:.0f} req/s, p50 {ld['p50_ms']:.2f} ms, "
                  f"p99 {ld['p99_ms']:.2f} ms (2 shared cores: the clients and the agent compete for them). "
                  f"Agent RSS: {ld['rss_start_mb']:.0f} MB at start, peak {ld['rss_peak_mb']:.0f} MB, "
                  f"{ld['rss_end_mb']:.0f} MB at the end; growth over the second half "
                  f"{ld['rss_second_half_growth_mb']:+.1f} MB."]
    if ld["first_errors"]:
        lines.append(f"First errors: {ld['first_errors']}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

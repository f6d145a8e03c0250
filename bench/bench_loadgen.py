"""Load generator vs wrk on the same trivial HTTP endpoint, side by side in one run.

Targets: the studio's request rate >= 0.5x wrk's, its p50 within 20% of wrk's. Both use the same number of
keep-alive connections against a minimal asyncio HTTP server running in its own process.

    .venv/bin/python bench/bench_loadgen.py [--seconds 5] [--connections 4] [--rounds 5] [--ab REV]

Rounds alternate wrk and the studio (which goes first alternates too); the ratios are per round, and the
reported figure is their median, because the shared machine's load drifts between rounds. ``--ab REV`` adds
the load generator as of git revision REV to every round (before/after in one run).

    .venv/bin/python bench/bench_loadgen.py --rate 200 [--seconds 3] [--rounds 5] [--ab REV]

``--rate R``: open loop at R req/s instead (no wrk): how late the load generator sends against each request's due
time (send delay p50 / p90 / p99) and its CPU (% of one core), this tree's and, with ``--ab``, REV's in each round.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVER = r'''
import asyncio, sys
RESP = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
class P(asyncio.Protocol):
    def connection_made(self, t): self.t = t; self.buf = b""
    def data_received(self, d):
        self.buf += d
        n = self.buf.count(b"\r\n\r\n")
        if n:
            self.buf = self.buf[self.buf.rfind(b"\r\n\r\n") + 4:]
            self.t.write(RESP * n)
async def main():
    srv = await asyncio.get_running_loop().create_server(P, "127.0.0.1", 0)
    print("PORT", srv.sockets[0].getsockname()[1], flush=True)
    await srv.serve_forever()
asyncio.run(main())
'''


def ensure_wrk() -> str:
    wrk = shutil.which("wrk")
    if wrk:
        return wrk
    print("wrk not found: installing the Debian package (apt-get install -y wrk)", file=sys.stderr)
    sudo = [] if shutil.which("sudo") is None or __import__("os").geteuid() == 0 else ["sudo"]
    if subprocess.run([*sudo, "apt-get", "install", "-y", "wrk"]).returncode != 0:
        subprocess.run([*sudo, "apt-get", "update"], check=True)
        subprocess.run([*sudo, "apt-get", "install", "-y", "wrk"], check=True)
    wrk = shutil.which("wrk")
    if not wrk:
        sys.exit("wrk is still not installed")
    return wrk


def _ms(text: str) -> float:
    m = re.match(r"([\d.]+)(us|ms|s)", text)
    if not m:
        raise ValueError(text)
    v, unit = float(m.group(1)), m.group(2)
    return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v


def run_wrk(wrk: str, url: str, seconds: float, conns: int) -> tuple[float, float, float]:
    out = subprocess.run([wrk, "-t1", f"-c{conns}", f"-d{int(seconds)}s", "--latency", url],
                         capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"\s50%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"\s99%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    return rps, p50, p99


def baseline_modules(rev: str) -> tuple[object, object]:
    """(kserve, loadgen) modules of the load generator as of git revision ``rev``, for --ab."""
    import importlib
    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="loadgen-ab-"))
    # http_client: the client since issue 17, load_types: loadgen's data since then (absent before)
    names = ["kserve", "loadgen", "http_client", "load_types"]
    for name in names:
        got = subprocess.run(["git", "show", f"{rev}:studio/telemetry/{name}.py"], cwd=ROOT,
                             capture_output=True, text=True)
        if got.returncode != 0 and name in ("http_client", "load_types"):
            continue
        got.check_returncode()
        src = got.stdout
        for other in names:
            src = src.replace(f"from studio.telemetry.{other} import", f"from baseline_{other} import")
        (tmp / f"baseline_{name}.py").write_text(src)
    sys.path.insert(0, str(tmp))
    return importlib.import_module("baseline_kserve"), importlib.import_module("baseline_loadgen")


def run_studio(port: int, seconds: float, conns: int, mods: tuple[object, object] | None = None
               ) -> tuple[float, float, float, float]:
    """(req/s, p50 ms, p99 ms, client CPU us per request): the CPU time of this process over the run, which the
    shared machine's load disturbs less than the rate does."""
    from studio.telemetry.kserve import Endpoint, build_request
    from studio.telemetry.loadgen import LoadConfig, LoadGenerator

    if mods is not None:  # --ab: the baseline revision's load generator
        Endpoint, build_request = mods[0].Endpoint, mods[0].build_request  # type: ignore[attr-defined]  # noqa: N806
        LoadConfig, LoadGenerator = mods[1].LoadConfig, mods[1].LoadGenerator  # type: ignore[attr-defined]  # noqa: N806

    url = f"http://127.0.0.1:{port}"
    cfg = LoadConfig(url=url, model="trivial", concurrency=[conns], duration_s=seconds, warmup_s=0.5,
                     window_s=1.0, stability=False, path="/")
    gen = LoadGenerator(cfg)
    gen.use_raw_requests([build_request(Endpoint.parse(url), "GET", "/")])
    cpu0 = time.process_time()
    lv = gen.run()[0]
    cpu_us = 1e6 * (time.process_time() - cpu0) / max(1, lv.successes + lv.warmup_successes)
    return lv.throughput_rps, lv.latency.p50_ms or 0.0, lv.latency.p99_ms or 0.0, cpu_us


def run_open(port: int, seconds: float, rate: float, mods: tuple[object, object] | None = None
             ) -> tuple[float, float, float, float, float]:
    """Open loop at ``rate``: (send delay p50, p90, p99 ms, latency p50 ms, client CPU % of one core)."""
    from studio.telemetry.kserve import Endpoint, build_request
    from studio.telemetry.loadgen import LoadConfig, LoadGenerator

    if mods is not None:
        Endpoint, build_request = mods[0].Endpoint, mods[0].build_request  # type: ignore[attr-defined]  # noqa: N806
        LoadConfig, LoadGenerator = mods[1].LoadConfig, mods[1].LoadGenerator  # type: ignore[attr-defined]  # noqa: N806
    url = f"http://127.0.0.1:{port}"
    cfg = LoadConfig(url=url, model="trivial", concurrency=[1], rate=rate, duration_s=seconds, warmup_s=0.5,
                     window_s=seconds, stability=False, path="/")
    gen = LoadGenerator(cfg)
    gen.use_raw_requests([build_request(Endpoint.parse(url), "GET", "/")])
    cpu0, t0 = time.process_time(), time.perf_counter()
    lv = gen.run()[0]
    cpu = 100.0 * (time.process_time() - cpu0) / (time.perf_counter() - t0)
    d = lv.send_delay
    return d.p50_ms or 0.0, d.p90_ms or 0.0, d.p99_ms or 0.0, lv.latency.p50_ms or 0.0, cpu


def open_loop(args: argparse.Namespace, port: int, base: tuple[object, object] | None) -> int:
    """--rate: this tree's load generator (and --ab REV's) at one open-loop rate, rounds alternating the order."""
    import os

    names = ["this tree"] + ([args.ab] if base is not None else [])
    runs: dict[str, list[tuple[float, ...]]] = {n: [] for n in names}
    for r in range(args.rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            runs[n].append(run_open(port, args.seconds, args.rate, None if n == "this tree" else base))
            x = runs[n][-1]
            print(f"round {r + 1} {n}: send delay p50 {x[0]:.3f} p90 {x[1]:.3f} p99 {x[2]:.3f} ms, latency p50 "
                  f"{x[3]:.3f} ms, CPU {x[4]:.1f} %", file=sys.stderr, flush=True)
    med = statistics.median
    print(f"trivial endpoint, open loop at {args.rate:g} req/s, {args.seconds:g} s x {args.rounds} alternating "
          f"rounds, medians over the rounds; load average {os.getloadavg()[0]:.1f} at the end")
    print("| load generator | send delay p50 ms | p90 ms | p99 ms | latency p50 ms | CPU % of a core |")
    print("|---|---|---|---|---|---|")
    for n in names:
        m = [med(x[i] for x in runs[n]) for i in range(5)]
        print(f"| {n} | {m[0]:.3f} | {m[1]:.3f} | {m[2]:.3f} | {m[3]:.3f} | {m[4]:.1f} |")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5, help="alternate wrk / studio this many times")
    ap.add_argument("--ab", metavar="REV", help="also run the load generator as of this git revision in each round")
    ap.add_argument("--rate", type=float, help="open loop at this rate: send delay and CPU (no wrk)")
    args = ap.parse_args()
    base = baseline_modules(args.ab) if args.ab else None
    b_runs: list[tuple[float, float, float, float]] = []
    wrk = ensure_wrk() if args.rate is None else ""
    srv = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(srv.stdout.readline().split()[1])  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/"
        time.sleep(0.3)
        if args.rate is not None:
            return open_loop(args, port, base)
        w_runs, s_runs = [], []
        for r in range(args.rounds):
            first_wrk = r % 2 == 0  # alternate which goes first, so a drift in the machine's load cancels
            if first_wrk:
                w_runs.append(run_wrk(wrk, url, args.seconds, args.connections))
            s_runs.append(run_studio(port, args.seconds, args.connections))
            if not first_wrk:
                w_runs.append(run_wrk(wrk, url, args.seconds, args.connections))
            if base is not None:
                b_runs.append(run_studio(port, args.seconds, args.connections, base))
                print(f"round {r + 1}: {args.ab} loadgen {b_runs[-1][0]:.0f}/s p50 {b_runs[-1][1]:.3f} ms "
                      f"{b_runs[-1][3]:.1f} us CPU/req | rate "
                      f"ratio {b_runs[-1][0] / w_runs[-1][0]:.2f} p50 ratio {b_runs[-1][1] / w_runs[-1][1]:.2f}",
                      file=sys.stderr, flush=True)
            print(f"round {r + 1}: wrk {w_runs[-1][0]:.0f}/s p50 {w_runs[-1][1]:.3f} ms | studio "
                  f"{s_runs[-1][0]:.0f}/s p50 {s_runs[-1][1]:.3f} ms {s_runs[-1][3]:.1f} us CPU/req | rate ratio "
                  f"{s_runs[-1][0] / w_runs[-1][0]:.2f}"
                  f" p50 ratio {s_runs[-1][1] / w_runs[-1][1]:.2f}", file=sys.stderr, flush=True)
    finally:
        srv.kill()
    med = statistics.median
    w = [med(x[i] for x in w_runs) for i in range(3)]
    s = [med(x[i] for x in s_runs) for i in range(3)]
    rate_ratios = [b[0] / a[0] for a, b in zip(w_runs, s_runs, strict=True)]
    p50_ratios = [b[1] / a[1] for a, b in zip(w_runs, s_runs, strict=True)]
    print(f"trivial endpoint, {args.connections} keep-alive connections, {args.seconds:g} s x {args.rounds} "
          "alternating rounds; medians over the rounds")
    print("| client | req/s | p50 ms | p99 ms |\n|---|---|---|---|")
    print(f"| wrk (-t1 -c{args.connections}) | {w[0]:.0f} | {w[1]:.3f} | {w[2]:.3f} |")
    print(f"| studio loadgen (concurrency {args.connections}) | {s[0]:.0f} | {s[1]:.3f} | {s[2]:.3f} |")
    rate_ratio, p50_ratio = med(rate_ratios), med(p50_ratios)
    print(f"rate ratio studio/wrk per round: {', '.join(f'{v:.2f}' for v in rate_ratios)}; "
          f"median {rate_ratio:.2f} (target >= 0.5)")
    print(f"p50 ratio studio/wrk per round: {', '.join(f'{v:.2f}' for v in p50_ratios)}; "
          f"median {p50_ratio:.2f} (target within 0.8..1.2)")
    if b_runs:
        br = [b[0] / a[0] for a, b in zip(w_runs, b_runs, strict=True)]
        bp = [b[1] / a[1] for a, b in zip(w_runs, b_runs, strict=True)]
        print(f"| studio loadgen as of {args.ab} | {med(x[0] for x in b_runs):.0f} | "
              f"{med(x[1] for x in b_runs):.3f} | {med(x[2] for x in b_runs):.3f} |")
        print(f"{args.ab}: rate ratio per round {', '.join(f'{v:.2f}' for v in br)}; median {med(br):.2f}; "
              f"p50 ratio per round {', '.join(f'{v:.2f}' for v in bp)}; median {med(bp):.2f}")
        sr = [a[0] / b[0] for a, b in zip(s_runs, b_runs, strict=True)]
        print(f"rate studio / {args.ab}, same round: {', '.join(f'{v:.2f}' for v in sr)}; median {med(sr):.2f}")
        cr = [a[3] / b[3] for a, b in zip(s_runs, b_runs, strict=True)]
        print(f"client CPU per request, studio / {args.ab}, same round: {', '.join(f'{v:.2f}' for v in cr)}; "
              f"median {med(cr):.2f} ({med(x[3] for x in s_runs):.1f} vs {med(x[3] for x in b_runs):.1f} us)")
    return 0 if rate_ratio >= 0.5 and 0.8 <= p50_ratio <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())

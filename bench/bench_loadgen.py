"""Load generator vs wrk on the same trivial HTTP endpoint, side by side in one run.

Targets: the studio's request rate >= 0.5x wrk's, its p50 within 20% of wrk's. Both use the same number of
keep-alive connections against a minimal asyncio HTTP server running in its own process.

    .venv/bin/python bench/bench_loadgen.py [--seconds 5] [--connections 4]
"""

from __future__ import annotations

import argparse
import re
import shutil
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


def run_studio(port: int, seconds: float, conns: int) -> tuple[float, float, float]:
    from studio.telemetry.kserve import Endpoint, build_request
    from studio.telemetry.loadgen import LoadConfig, LoadGenerator

    url = f"http://127.0.0.1:{port}"
    cfg = LoadConfig(url=url, model="trivial", concurrency=[conns], duration_s=seconds, warmup_s=0.5,
                     window_s=1.0, stability=False, path="/")
    gen = LoadGenerator(cfg)
    gen.use_raw_requests([build_request(Endpoint.parse(url), "GET", "/")])
    lv = gen.run()[0]
    return lv.throughput_rps, lv.latency.p50_ms or 0.0, lv.latency.p99_ms or 0.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2, help="alternate wrk / studio this many times")
    args = ap.parse_args()
    wrk = ensure_wrk()
    srv = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(srv.stdout.readline().split()[1])  # type: ignore[union-attr]
        url = f"http://127.0.0.1:{port}/"
        time.sleep(0.3)
        w_runs, s_runs = [], []
        for _ in range(args.rounds):
            w_runs.append(run_wrk(wrk, url, args.seconds, args.connections))
            s_runs.append(run_studio(port, args.seconds, args.connections))
        w = [sum(x[i] for x in w_runs) / len(w_runs) for i in range(3)]
        s = [sum(x[i] for x in s_runs) / len(s_runs) for i in range(3)]
    finally:
        srv.kill()
    print(f"trivial endpoint, {args.connections} keep-alive connections, {args.seconds:g} s x {args.rounds} rounds")
    print("| client | req/s | p50 ms | p99 ms |\n|---|---|---|---|")
    print(f"| wrk 4.1 (-t1) | {w[0]:.0f} | {w[1]:.3f} | {w[2]:.3f} |")
    print(f"| studio loadgen | {s[0]:.0f} | {s[1]:.3f} | {s[2]:.3f} |")
    rate_ratio, p50_ratio = s[0] / w[0], s[1] / w[1]
    print(f"rate ratio studio/wrk = {rate_ratio:.2f} (target >= 0.5); "
          f"p50 ratio = {p50_ratio:.2f} (target within 0.8..1.2)")
    return 0 if rate_ratio >= 0.5 and 0.8 <= p50_ratio <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())

"""What serving adds to generation: the bare studio runtime vs a real studio-agent's ``generate_stream`` (SSE over
loopback HTTP) on the same exported decoder, side by side in one run.

Per path, medians over the repeats (the paths take turns within each repeat): time to first text (the prompt
text in -> the first text piece out: in-process for the bare ``TextGenerator``, request sent -> first SSE event
received for the agent, from two clients: httpx's streaming client, what a Python user writes, and a raw keep-alive
socket, the least a client adds) and output tokens/s end to end. The agent runs with ``--threads 1`` like the bare path;
both are greedy and their texts are checked equal. Ratios are agent / bare (the issue's target: TTFT within
1.2x of a bare-runtime loop). Where the agent's time goes: its own ``usage.ttft_ms`` (request in -> first text,
server side) and the HTTP floor (median round trip of ``GET /v2/health/ready`` on the same keep-alive client)
are printed beside it.

    .venv/bin/python -m bench.bench_generate_serving [--hidden 32] [--layers 2] [--new-tokens 64] [--repeats 9]
        [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

PROMPTS = ["a photo of a cat", "what is the color of the car near the house?"]
# TTFT is time to first *text*: a prompt whose first new token is a lone UTF-8 byte (random weights) yields no
# text until a later token completes it, so its "first text" time is the whole generation on both paths. The
# timed prompts are the first two of these whose first greedy token is text on its own (checked before timing).
CANDIDATES = [*PROMPTS, "hello world", "tell me about the sea", "one two three four", "the quick brown fox",
              "describe the picture", "where is the station?", "a dog on the grass", "count to ten"]


def text_first_prompts(folder: Path, n: int = 2) -> list[str]:
    from studio.generate.api import TextGenerator

    gen = TextGenerator(folder, threads=1)
    def text_first(prompt: str) -> bool:
        first = gen.generate(prompt, max_new_tokens=1).token_ids[0]
        piece = gen.tokenizer.decode([first])
        return bool(piece.strip()) and "\ufffd" not in piece  # a lone byte decodes to the replacement char

    out = [c for c in CANDIDATES if text_first(c)][:n]
    if len(out) < n:
        raise SystemExit(f"fewer than {n} of the candidate prompts start with text on this model: {out}")
    return out


def bare_path(folder: Path, new: int) -> Any:
    from studio.generate.api import TextGenerator

    gen = TextGenerator(folder, threads=1)

    def run(prompt: str) -> tuple[str, float, float, int]:
        first: list[float] = []
        t0 = time.perf_counter()
        res = gen.generate(prompt, max_new_tokens=new, on_text=lambda _t: first or first.append(time.perf_counter()))
        t1 = time.perf_counter()
        return res.text, (first[0] if first else t1) - t0, t1 - t0, len(res.token_ids)

    return run


def agent_path(url: str, new: int, server_ttft: list[float] | None = None) -> Any:
    """``server_ttft`` collects the agent's own usage.ttft_ms (request in -> first text) per run."""
    import httpx

    client = httpx.Client(timeout=60)

    def run(prompt: str) -> tuple[str, float, float, int]:
        pieces: list[str] = []
        first = None
        tokens = 0
        t0 = time.perf_counter()
        with client.stream("POST", url + "/v2/models/bench/generate_stream",
                           json={"text_input": prompt, "max_tokens": new}) as s:
            for line in s.iter_lines():
                if not line.startswith("data: "):
                    continue
                if first is None:
                    first = time.perf_counter()
                ev = json.loads(line[6:])
                pieces.append(ev.get("text_output", ""))
                tokens = ev.get("usage", {}).get("completion_tokens", tokens)
                if server_ttft is not None and "usage" in ev:
                    server_ttft.append(float(ev["usage"]["ttft_ms"]))
        t1 = time.perf_counter()
        return "".join(pieces), (first or t1) - t0, t1 - t0, tokens

    return run


def raw_path(url: str, new: int) -> Any:
    """The same request from a raw keep-alive socket (TCP_NODELAY, chunked SSE parsed by hand): the least a
    client can add, so this row's ratio is what the agent itself adds; httpx's own request and response work
    (~1.8 ms of the httpx row, stamped) is the client's."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(url)
    sock = socket.create_connection((u.hostname, u.port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = (f"POST /v2/models/bench/generate_stream HTTP/1.1\r\nHost: {u.netloc}\r\n"
            "Content-Type: application/json\r\nContent-Length: ").encode()

    def run(prompt: str) -> tuple[str, float, float, int]:
        body = json.dumps({"text_input": prompt, "max_tokens": new}).encode()
        pieces: list[str] = []
        first = None
        tokens = 0
        t0 = time.perf_counter()
        sock.sendall(head + str(len(body)).encode() + b"\r\n\r\n" + body)
        buf = b""
        while b"\r\n\r\n" not in buf:
            buf += sock.recv(65536)
        status, buf = buf.split(b"\r\n\r\n", 1)
        if b" 200 " not in status.split(b"\r\n", 1)[0] or b"chunked" not in status.lower():
            raise SystemExit(f"unexpected answer from the agent: {status[:200]!r}")
        data, done = b"", False
        while True:
            while not done:  # whole chunks in buf -> data
                i = buf.find(b"\r\n")
                if i < 0:
                    break
                size = int(buf[:i].split(b";")[0], 16)
                if len(buf) < i + 4 + size:
                    break
                data, buf = data + buf[i + 2:i + 2 + size], buf[i + 4 + size:]
                done = size == 0
            while b"\n\n" in data:  # whole events
                event, data = data.split(b"\n\n", 1)
                if event.startswith(b"data: "):
                    if first is None:
                        first = time.perf_counter()
                    ev = json.loads(event[6:])
                    pieces.append(ev.get("text_output", ""))
                    tokens = ev.get("usage", {}).get("completion_tokens", tokens)
            if done:
                break
            chunk = sock.recv(65536)
            if not chunk:
                raise SystemExit("the agent closed the connection mid-stream")
            buf += chunk
        t1 = time.perf_counter()
        return "".join(pieces), (first or t1) - t0, t1 - t0, tokens

    return run


def start_agent(folder: Path, work: Path) -> Any:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle
    from tests.edge.helpers import AgentProcess, dev_keys

    dev = dev_keys(work)
    rep = build_bundle(folder, "generic-x86_64", dev.signing_key, work / "bench.tar", name="bench", version="1")
    agent = AgentProcess(work / "data", dev.trust, dev.token, extra=["--threads", "1"]).start()
    deploy_bundle(Path(rep.bundle), agent.url, dev.token.read_text().strip())
    return agent


def main(argv: list[str] | None = None) -> int:
    from bench.bench_generate import export, sample

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--append", type=Path, default=None, help="append the markdown section to this file")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-gen-serve-") as tmp:
        work = Path(tmp)
        folder = export(sample(work, args.hidden, args.layers), work)
        agent = start_agent(folder, work)
        try:
            server_ttft: list[float] = []
            paths = {"bare TextGenerator (in process)": bare_path(folder, args.new_tokens),
                     "agent generate_stream (SSE, loopback)": agent_path(agent.url, args.new_tokens, server_ttft),
                     "agent generate_stream, raw socket client": raw_path(agent.url, args.new_tokens)}
            acc: dict[str, dict[str, list[float]]] = {n: {"ttft": [], "tps": []} for n in paths}
            prompts = args.prompts = text_first_prompts(folder)
            for run in paths.values():  # one warm-up each
                run(prompts[0])
            for _ in range(args.repeats):
                texts = {}
                for prompt in prompts:
                    for name, run in paths.items():
                        text, ttft, total, n = run(prompt)
                        acc[name]["ttft"].append(ttft * 1e3)
                        acc[name]["tps"].append(n / total)
                        texts.setdefault(prompt, set()).add(text)
                if any(len(v) != 1 for v in texts.values()):
                    raise SystemExit(f"texts differ between the paths: {texts}")
            floor = http_floor_ms(agent.url, 5 * args.repeats)
        finally:
            agent.stop()
    res = {n: {"ttft_ms": statistics.median(a["ttft"]), "tokens_per_s": statistics.median(a["tps"])}
           for n, a in acc.items()}
    text = render(res, args, argv) + (
        f"\n\nagent's own TTFT (usage.ttft_ms, request in -> first text): "
        f"{statistics.median(server_ttft[len(server_ttft) - 2 * args.repeats:]):.3f} ms (httpx requests); "
        f"HTTP floor (GET /v2/health/ready round trip, same client): {floor:.3f} ms")
    print(text)
    if args.append:
        with args.append.open("a", encoding="utf-8") as f:
            f.write("\n" + text + "\n")
    return 0


def http_floor_ms(url: str, n: int) -> float:
    """Median round trip of the agent's cheapest route on a keep-alive httpx client: loopback HTTP's own cost."""
    import httpx

    with httpx.Client(timeout=60) as client:
        client.get(url + "/v2/health/ready")
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            client.get(url + "/v2/health/ready")
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def render(res: dict[str, dict[str, float]], args: argparse.Namespace, argv: list[str] | None) -> str:
    base = next(iter(res.values()))
    lines = [f"## Generation served: bare runtime vs the agent's generate_stream "
             f"(`bench/bench_generate_serving.py`, issue 14, {datetime.now():%Y-%m-%d})", "",
             f"tiny Qwen2 (hidden {args.hidden}, {args.layers} layers), {args.new_tokens} new tokens greedy, "
             f"prompts {' / '.join(map(repr, args.prompts))} (first new token is text) x {args.repeats} "
             f"repeats, 1 ORT thread each, {platform.machine()} "
             f"`{' '.join(['python -m bench.bench_generate_serving', *(argv or sys.argv[1:])])}`", "",
             "| path | TTFT ms (median) | tokens/s (median) | TTFT vs bare | tokens/s vs bare |",
             "|---|---|---|---|---|"]
    for name, r in res.items():
        lines.append(f"| {name} | {r['ttft_ms']:.3f} | {r['tokens_per_s']:.0f} | "
                     f"{r['ttft_ms'] / base['ttft_ms']:.2f}x | {r['tokens_per_s'] / base['tokens_per_s']:.2f}x |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

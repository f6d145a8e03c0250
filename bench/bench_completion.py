"""Shell completion latency: one Tab (the command answering argcomplete's request) vs `studio --version`.

Both are a fresh process of the same console script, so `studio --version` (Python start, site-packages,
`studio.cli.main`) is the fair floor: the ratio is what building the typed command's parser and reading the
registry (targets, boards, pages) adds to every Tab. Rounds alternate the floor and each line; medians.

    .venv/bin/python -m bench.bench_completion [--rounds 15] [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
LINES = ["studio ins", "studio inspect --target ", "studio package --board ", "studio gui --page ",
         "studio export --", "studio-agent --board ", "multimodal-serve --"]


def _tab(line: str) -> float:
    env = {**os.environ, "_ARGCOMPLETE": "1", "_ARGCOMPLETE_SHELL": "bash", "COMP_LINE": line,
           "COMP_POINT": str(len(line)), "_ARGCOMPLETE_IFS": "\n"}
    r, w = os.pipe()
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(BIN / line.split()[0])], env=env, pass_fds=(w,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, preexec_fn=lambda: (os.dup2(w, 8), os.dup2(w, 9)))
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    proc.wait()
    dt = time.perf_counter() - t0
    os.close(r)
    if not out.strip():
        raise SystemExit(f"no candidates for {line!r}")
    return dt


def _version() -> float:
    t0 = time.perf_counter()
    subprocess.run([str(BIN / "studio"), "--version"], check=True, capture_output=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--append", type=Path, default=None)
    args = ap.parse_args(argv)
    floor: list[float] = []
    tabs: dict[str, list[float]] = {line: [] for line in LINES}
    for _ in range(args.rounds):
        floor.append(_version())
        for line in LINES:
            tabs[line].append(_tab(line))
    f50 = statistics.median(floor) * 1000
    rows = [f"| `studio --version` (floor) | {f50:.0f} | 1.00x |"]
    for line, ts in tabs.items():
        m = statistics.median(ts) * 1000
        rows.append(f"| `{line}<Tab>` | {m:.0f} | {m / f50:.2f}x |")
    load = os.getloadavg()[0]
    text = (f"\n## Shell completion: one Tab vs `studio --version` (`bench/bench_completion.py`, "
            f"{time.strftime('%Y-%m-%d')})\n\n"
            f"Command: `.venv/bin/python -m bench.bench_completion --rounds {args.rounds}` ({platform.machine()}, "
            f"Python {platform.python_version()}, load average {load:.1f}). Each Tab is a fresh process of the "
            "console script answering argcomplete's request; medians over alternating rounds.\n\n"
            "| what | median ms | vs floor |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    print(text)
    if args.append:
        with open(args.append, "a", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Wall time and peak memory of a command, as the benchmarks of big models report them.

Peak RSS is the kernel's own figure for the child (``ru_maxrss`` of the waited process: its high-water mark, read
when it exits, so no sampling can miss a spike inside a C++ call). That figure starts at the caller's own
high-water mark (carried through fork / vfork and exec): keep the calling process small (build models in a child,
as bench_export_real does). A sampler adds a timeline (RSS every 0.2 s with
the last status line the command printed) to say where the peak was.

    .venv/bin/python -m bench.rss -- CMD ARGS...
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Measured:
    returncode: int
    seconds: float
    peak_rss: int  # bytes, the kernel's high-water mark of the process
    timeline: list[tuple[float, int, str]] = field(default_factory=list)  # (t, rss bytes, last status line)
    output: str = ""

    @property
    def peak_gb(self) -> float:
        return self.peak_rss / 1e9

    def where_peak(self) -> str:
        if not self.timeline:
            return ""
        t, rss, line = max(self.timeline, key=lambda x: x[1])
        return f"{rss / 1e9:.2f} GB sampled at {t:.1f} s during: {line[:120]}"


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def measure(cmd: list[str], *, cwd: Path | str | None = None, env: dict[str, str] | None = None,
            echo: bool = False) -> Measured:
    """Run ``cmd`` to its end; its exit code, wall time, peak RSS and an RSS timeline with its status lines."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            bufsize=1)
    last = [""]
    lines: list[str] = []
    timeline: list[tuple[float, int, str]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            timeline.append((time.perf_counter() - t0, _rss(proc.pid), last[0]))

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.strip():
            last[0] = line.strip()
        if echo:
            sys.stderr.write(line)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    th.join()
    return Measured(proc.returncode, time.perf_counter() - t0, usage.ru_maxrss * 1024, timeline, "".join(lines))


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    m = measure(argv, echo=True)
    print(f"exit {m.returncode}, {m.seconds:.1f} s, peak RSS {m.peak_gb:.2f} GB ({m.where_peak()})")
    return m.returncode


if __name__ == "__main__":
    sys.exit(main())

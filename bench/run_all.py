"""`make bench`: run every bench/bench_*.py in its own process, one after another (they compete for 2 cores).

Each script prints its own side-by-side figures; pass ``--only NAME`` to run a subset. Scripts append to
BENCHMARKS.md only when given their own ``--append``/``--write`` flag, so a plain run changes nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--only", action="append", default=[], help="e.g. --only export --only inspect")
    args = ap.parse_args(argv)
    scripts = sorted(HERE.glob("bench_*.py"))
    if args.only:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in args.only]
    failed = []
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        t0 = time.monotonic()
        rc = subprocess.call([sys.executable, "-m", f"bench.{script.stem}"], cwd=HERE.parent)
        print(f"=== {script.stem}: exit {rc} after {time.monotonic() - t0:.0f} s", flush=True)
        if rc:
            failed.append(script.stem)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

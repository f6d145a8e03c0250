"""`studio optimize` on tiny-clip's vision and text parts, per target: the search's wall time on this machine, the
candidates judged, the chosen recipe and its accuracy, the cached re-run, and the floor: replaying the chosen
recipe by hand (its `studio fix` + `studio compile` lines), i.e. one attempt a user would make without the search.

    .venv/bin/python -m bench.bench_optimize [--targets ort-cpu,openvino,tvm-relax,rk3588] [--time-limit 20]

Each run is a fresh `studio` process with --no-cache, then the same command again (cached), then the recipe's
commands one by one. The studio's cache is a temporary folder (STUDIO_CACHE_DIR), the rknn-toolkit2 environment the
user's (STUDIO_RKNN_ENV pinned to it first).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STUDIO = [sys.executable, "-m", "studio.cli.main"]


def _clip(tmp: Path) -> tuple[Path, Path]:
    import numpy as np
    from PIL import Image

    from studio.export.api import ExportOptions, export_model
    from studio.export.samples import write_sample

    write_sample("tiny-clip", tmp / "src")
    export_model(ExportOptions(model_dir=tmp / "src", output=tmp / "out" / "clip.onnx", split_modalities=True))
    cal = tmp / "cal"
    cal.mkdir()
    rng = np.random.default_rng(3)
    for i in range(4):
        h, w = 40 + 8 * i, 64 - 4 * i
        grad = np.linspace(0, 1, h * w, dtype=np.float32).reshape(h, w, 1)
        img = np.clip(rng.integers(30, 220, (1, 1, 3)) * (0.5 + grad) + rng.normal(0, 20, (h, w, 3)), 0, 255)
        Image.fromarray(img.astype(np.uint8)).save(cal / f"img{i}.png")
    (cal / "captions.txt").write_text("a cat on a sofa\na photo of a dog\na red car\nblue sky over the sea\n")
    return tmp / "out", cal


def _run(argv: list[str]) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=os.environ.copy())
    return time.perf_counter() - t0, p.returncode, p.stdout + p.stderr


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", default="ort-cpu,openvino,tvm-relax,rk3588")
    ap.add_argument("--time-limit", default="20")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-optimize-"))
    try:
        from studio_rknn.env import ENV_VAR, env_dir

        os.environ[ENV_VAR] = str(env_dir())
    except ImportError:
        pass
    os.environ["STUDIO_CACHE_DIR"] = str(tmp / "cache")
    try:
        export, cal = _clip(tmp)
        rows = []
        for target in args.targets.split(","):
            out = tmp / f"out-{target}"
            cmd = [*STUDIO, "optimize", str(export), "--target", target, "--calibration", str(cal), "--out", str(out),
                   "--time-limit", args.time_limit]
            secs, rc, log = _run([*cmd, "--no-cache"])
            if rc not in (0, 1):
                print(f"{target}: exit {rc}\n{log[-2000:]}", file=sys.stderr)
                continue
            rep = json.loads((out / "optimize_report.json").read_text())
            again_s, _rc2, _ = _run([*cmd, "--json"])
            cached = json.loads((out / "optimize_report.json").read_text()).get("cached", False)
            replay = tmp / f"replay-{target}"
            floor = 0.0
            for part in rep["parts"]:
                for line in part["commands"]:
                    argv = [a.replace(str(out / part["part"]), str(replay / part["part"])) for a in shlex.split(line)]
                    (replay / part["part"]).mkdir(parents=True, exist_ok=True)
                    if argv[0] == "cp":
                        shutil.copy2(argv[1], argv[2])
                        continue
                    s, rc3, log3 = _run([*STUDIO, *argv[1:]])
                    floor += s
                    if rc3 != 0:
                        print(f"{target}: replay failed: {line}\n{log3[-800:]}", file=sys.stderr)
            for part in rep["parts"]:
                ch = next(c for c in part["candidates"] if c["id"] == part["chosen"])
                rows.append({"target": target, "part": part["part"], "status": rep["status"], "search_s": secs,
                             "cached_s": again_s, "cached": cached, "replay_s": floor,
                             "judged": sum(c["status"] not in ("skipped",) for c in part["candidates"]),
                             "pruned": sum(c["status"] == "pruned" for c in part["candidates"]),
                             "chosen": ch["label"], "cosine": (ch["judged"].get("accuracy") or {}).get("cosine"),
                             "verdict": (ch["judged"].get("verdict") or {}).get("verdict"),
                             "tool": ch["judged"].get("tool", "")})
        print(f"host: {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        print("| target | part | search s (whole run) | candidates (pruned) | chosen | tool verdict | cosine | cached "
              "re-run s | by-hand replay s (whole run) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['target']} | {r['part']} | {r['search_s']:.1f} | {r['judged']} ({r['pruned']}) | "
                  f"{r['chosen']} | {r['verdict']} | {r['cosine']:.6f} | {r['cached_s']:.1f}"
                  f"{'' if r['cached'] else ' (not cached!)'} | {r['replay_s']:.1f} |")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

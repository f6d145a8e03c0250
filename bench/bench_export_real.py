"""`studio export` at the dimensions of public checkpoints vs the plain floor, and `studio inspect` of the exports
vs the fair floor: wall time and peak RSS, side by side in one run.

    flock /tmp/bigmem.lock .venv/bin/python -m bench.bench_export_real [--models clip-vit-b32,...] [--reps 1]
        [--models-dir /tmp/studio-bench-models] [--append]

Models (bench.real_models, random weights): CLIP ViT-B/32 (151M), SigLIP base (203M), Whisper base (72M) and
Qwen2-VL at the 2B model's widths with 8 vision and 8 text layers (801M parameters, 3.2 GB FP32). Each run is a
fresh process, studio and plain alternated, same model folder, opset 17, TorchScript; peak RSS is the kernel's
high-water mark of the process (bench.rss). The floor (bench.plain_export) exports the very module and inputs the
studio traces, runs the full checker, one ONNX Runtime session and the same parity cases; `studio export` also runs
strict shape inference with data propagation, the tokenizer / processor probes, writes companions and settles the
weights layout. Whisper and Qwen2-VL are compared on their single-pass graphs (`--no-with-past`): the floor has
no generation check; their default runs (KV-cache graphs + greedy generation against HF) are timed beside.
Inspect: `studio inspect --target all` on each export vs `onnx.load(load_external_data=False)` +
`onnx.shape_inference.infer_shapes_path` (neither reads weights). Targets: export time <= 1.1x and peak RSS <= 1.5x
of the floor for CLIP ViT-B/32 and the 3 GB Qwen2-VL.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

from bench.rss import Measured, measure

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
MODELS = ["clip-vit-b32", "siglip-base", "whisper-base", "qwen2-vl-3gb"]
SINGLE_PASS = {"whisper-base", "qwen2-vl-3gb"}  # compared with --no-with-past (the floor has no generation)
FLOOR = """
import sys, time, onnx
t0 = time.perf_counter()
m = onnx.load(sys.argv[1], load_external_data=False)
onnx.shape_inference.infer_shapes_path(sys.argv[1], sys.argv[2])
print(f"floor {time.perf_counter() - t0:.3f}")
"""


def _ok(m: Measured, what: str) -> Measured:
    if m.returncode != 0:
        raise SystemExit(f"{what} failed ({m.returncode}):\n{m.output[-3000:]}")
    return m


def studio_export(model: Path, out: Path, extra: list[str]) -> Measured:
    shutil.rmtree(out.parent, ignore_errors=True)
    return _ok(measure([PY, "-m", "studio.cli.main", "export", str(model), "--output", str(out), *extra], cwd=ROOT),
               f"studio export {model.name}")


def plain_export(model: Path, out: Path) -> Measured:
    shutil.rmtree(out.parent, ignore_errors=True)
    return _ok(measure([PY, "-m", "bench.plain_export", str(model), str(out)], cwd=ROOT), f"plain {model.name}")


def row(name: str, what: str, a: list[Measured], b: list[Measured]) -> tuple[str, float, float]:
    ta, tb = statistics.median(m.seconds for m in a), statistics.median(m.seconds for m in b)
    ra, rb = max(m.peak_rss for m in a) / 1e9, max(m.peak_rss for m in b) / 1e9
    return (f"| {name} | {what} | {ta:.1f} | {tb:.1f} | **{ta / tb:.2f}x** | {ra:.2f} | {rb:.2f} | "
            f"**{ra / rb:.2f}x** |", ta / tb, ra / rb)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--models-dir", type=Path, default=Path(tempfile.gettempdir()) / "studio-bench-models")
    ap.add_argument("--default-flow", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the default flow (KV cache + generation check) of Whisper and Qwen2-VL")
    ap.add_argument("--append", action="store_true", help="append the tables to BENCHMARKS.md")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-export-real-"))
    export_rows, inspect_rows, default_rows = [], [], []
    try:
        for name in args.models.split(","):
            # built in a child process: a child's ru_maxrss starts at its parent's high-water mark (it carries
            # over through fork/vfork and exec), so a bench process that had held the 3 GB model itself would
            # lend every later measurement its 4.5 GB
            model = args.models_dir / name
            subprocess.run([PY, "-m", "bench.real_models", name, str(model)], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)
            extra = ["--no-with-past"] if name in SINGLE_PASS else []
            ours, plain = [], []
            for i in range(args.reps):
                plain.append(plain_export(model, work / "plain" / "model.onnx"))
                ours.append(studio_export(model, work / "studio" / "model.onnx", extra))
                print(f"{name} rep {i + 1}: studio {ours[-1].seconds:.1f} s {ours[-1].peak_gb:.2f} GB "
                      f"({ours[-1].where_peak()}); plain {plain[-1].seconds:.1f} s {plain[-1].peak_gb:.2f} GB",
                      flush=True)
            line, _, _ = row(name, "export" + (" (--no-with-past)" if extra else ""), ours, plain)
            export_rows.append(line)
            exported = work / "studio" / "model.onnx"
            ins, flo = [], []
            for _ in range(3):
                flo.append(_ok(measure([PY, "-c", FLOOR, str(exported), str(work / "inferred.onnx")], cwd=ROOT),
                               "floor"))
                ins.append(_ok(measure([PY, "-m", "studio.cli.main", "inspect", str(exported), "--target", "all",
                                        "--format", "json", "--output", str(work / "insp.json"), "--quiet"],
                                       cwd=ROOT), "inspect"))
            size = sum(p.stat().st_size for p in exported.parent.glob("model.onnx*"))
            line, _, _ = row(name, f"inspect ({size / 1e9:.2f} GB)", ins, flo)
            inspect_rows.append(line)
            if name in SINGLE_PASS and args.default_flow:
                m = studio_export(model, work / "default" / "model.onnx", [])
                default_rows.append(f"| {name} | default flow (KV cache + generation vs HF) | {m.seconds:.1f} | "
                                    f"{m.peak_gb:.2f} | {m.where_peak()} |")
            shutil.rmtree(work / "studio", ignore_errors=True)
            shutil.rmtree(work / "plain", ignore_errors=True)
            shutil.rmtree(work / "default", ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = [f"## Export and inspect at real dimensions (`bench/bench_export_real.py`, issue 29, {date.today()})", "",
             f"Command: `flock /tmp/bigmem.lock .venv/bin/python -m bench.bench_export_real --models {args.models} "
             f"--reps {args.reps}`; fresh process per run, studio and floor alternated, 2-core machine shared with "
             "other sessions (peak RSS is the kernel's high-water mark of each process).", "",
             "| model | run | studio (s) | floor (s) | time ratio | studio peak RSS (GB) | floor peak RSS (GB) | "
             "RSS ratio |", "|---|---|---|---|---|---|---|---|", *export_rows, *inspect_rows]
    if default_rows:
        lines += ["", "| model | run | seconds | peak RSS (GB) | where the peak was |", "|---|---|---|---|---|",
                  *default_rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.append:
        with (ROOT / "BENCHMARKS.md").open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: profiling overhead. The same model in two ONNX Runtime sessions, one plain and one with
``enable_profiling`` (what `studio profile` runs), alternated in blocks in one process; median per-run time.
Also the whole `studio.profiling.ort.profile_model` call (session with the optimized-graph dump, runs,
trace parse, lineage) against the plain runs it contains.

    .venv/bin/python -m bench.bench_profile [--runs 200] [--rounds 5] [--threads 1] [--model M.onnx]

Without --model the tiny-clip sample is exported first (export helper, ~15 s, not timed).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _export_clip(root: Path) -> Path:
    from studio.export.api import ExportOptions, export_model, write_sample

    src = write_sample("tiny-clip", root / "tiny-clip")
    rep = export_model(ExportOptions(model_dir=src, output=root / "export" / "model.onnx", validation_cases=1))
    if rep.status != "succeeded":
        raise SystemExit(f"export failed: {rep.diagnosis}")
    return root / "export" / "model.onnx"


def _block(sess, feed, n: int) -> float:  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    for _ in range(n):
        sess.run(None, feed)
    return (time.perf_counter() - t0) * 1000.0 / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", type=Path)
    ap.add_argument("--runs", type=int, default=200, help="runs per block")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    import onnxruntime as ort

    from studio.profiling.ort import make_feed, profile_model

    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or _export_clip(Path(tmp))

        def session(profiling: bool):  # type: ignore[no-untyped-def]
            so = ort.SessionOptions()
            so.log_severity_level = 3
            so.intra_op_num_threads = args.threads
            if profiling:
                so.enable_profiling = True
                so.profile_file_prefix = str(Path(tmp) / "bench")
            return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])

        plain, prof = session(False), session(True)
        feed = make_feed(plain, None)
        for s in (plain, prof):
            _block(s, feed, 20)  # warm-up
        a, b = [], []
        for _ in range(args.rounds):
            a.append(_block(plain, feed, args.runs))
            b.append(_block(prof, feed, args.runs))
        prof.end_profiling()
        pa, pb = statistics.median(a), statistics.median(b)

        t0 = time.perf_counter()
        rep = profile_model(model, runs=args.runs, warmup=3, threads=args.threads)
        whole = time.perf_counter() - t0
        plain_total = (args.runs + 3) * pa / 1000.0
    print(f"model: {model} ({len(rep.nodes)} nodes), feed {rep.input_shapes}, {args.threads} intra-op thread(s)")
    print(f"plain run:     median {pa:.4f} ms/run  (blocks of {args.runs}, {args.rounds} rounds: "
          f"{', '.join(f'{x:.4f}' for x in a)})")
    print(f"profiled run:  median {pb:.4f} ms/run  ({', '.join(f'{x:.4f}' for x in b)})")
    print(f"profiling overhead per run: x{pb / pa:.2f} ({pb - pa:+.4f} ms)")
    print(f"profile_model() total {whole:.2f} s for {args.runs}+3 runs vs {plain_total:.2f} s of plain runs "
          f"(x{whole / plain_total:.1f}: session load with optimized-graph dump, trace parse, lineage)")


if __name__ == "__main__":
    main()

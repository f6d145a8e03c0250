"""`studio export` of tiny-clip vs a plain torch.onnx.export + ORT parity script, and `studio --version` start-up.

    .venv/bin/python -m bench.bench_export [--reps 5] [--append] [--ab-tree DIR]

``--ab-tree DIR`` (a folder holding another studio/, e.g. ``git archive REV studio | tar -x -C DIR``): that tree's
``studio export`` also runs in every rep, order alternating, both as ``python -m studio.cli.main`` (the cwd comes
first on sys.path), and the per-rep ratio this/other is reported: an A/B of a refactor in one run.

Both exports run in fresh processes (import torch + transformers included, as a user pays it), alternated,
on the same sample folder, same opset 17, same dynamic axes, TorchScript exporter. The plain script does
what an engineer writes by hand: load, torch.onnx.export, full onnx.checker, ORT parity on the traced
shapes and one new batch/sequence shape. `studio export` additionally runs strict shape inference, a third
(padded) parity case, the tokenizer check and copies the companion files. Targets: ratio <= 1.3;
`studio --version` < 0.3 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PLAIN = r'''
import sys, numpy as np, torch, onnx, onnxruntime as ort
from transformers import CLIPModel
src, out = sys.argv[1], sys.argv[2]
model = CLIPModel.from_pretrained(src).eval()
class W(torch.nn.Module):
    def __init__(s, m): super().__init__(); s.m = m
    def forward(s, input_ids, attention_mask, pixel_values):
        o = s.m(input_ids=input_ids, attention_mask=attention_mask, pixel_values=pixel_values)
        return o.logits_per_image, o.logits_per_text, o.text_embeds, o.image_embeds
w = W(model).eval()
def inputs(b, s, seed):
    r = np.random.default_rng(seed)
    return {"input_ids": r.integers(0, 300, (b, s)).astype(np.int64), "attention_mask": np.ones((b, s), np.int64),
            "pixel_values": r.standard_normal((b, 3, 32, 32)).astype(np.float32)}
names = ["input_ids", "attention_mask", "pixel_values"]
x = inputs(2, 8, 0)
axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
        "pixel_values": {0: "batch"}}
with torch.no_grad():
    torch.onnx.export(w, tuple(torch.from_numpy(x[n]) for n in names), out, input_names=names,
                      output_names=["logits_per_image", "logits_per_text", "text_embeds", "image_embeds"],
                      dynamic_axes=axes, opset_version=17, dynamo=False)
onnx.checker.check_model(out, full_check=True)
sess = ort.InferenceSession(out, providers=["CPUExecutionProvider"])
for b, s, seed in ((2, 8, 0), (3, 11, 1)):
    feeds = inputs(b, s, seed)
    with torch.no_grad():
        ref = [t.numpy() for t in w(*(torch.from_numpy(feeds[n]) for n in names))]
    for got, want in zip(sess.run(None, feeds), ref):
        assert np.allclose(got, want, atol=1e-4, rtol=1e-3)
print("ok")
'''


def timed(cmd: list[str], cwd: Path = ROOT) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return dt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--append", action="store_true", help="append the figures to BENCHMARKS.md")
    ap.add_argument("--ab-tree", type=Path, default=None, help="a folder holding another studio/ to A/B against")
    args = ap.parse_args(argv)
    py = sys.executable
    studio = str(Path(py).with_name("studio"))
    if args.ab_tree is not None:
        args.ab_tree = args.ab_tree.resolve()
        for tree in (ROOT, args.ab_tree):  # both with their bytecode, as an installed package has it
            subprocess.run([py, "-m", "compileall", "-q", "-j", "0", str(tree / "studio")], check=True,
                           stdout=subprocess.DEVNULL)
    if args.ab_tree is not None or not Path(studio).exists():
        studio_cmd = [py, "-m", "studio.cli.main"]
    else:
        studio_cmd = [studio]
    with tempfile.TemporaryDirectory() as tmp_:
        tmp = Path(tmp_)
        subprocess.run([*studio_cmd, "sample-model", "tiny-clip", "--out", str(tmp / "clip")], check=True,
                       cwd=ROOT, capture_output=True)
        timed([py, "-c", PLAIN, str(tmp / "clip"), str(tmp / "warm.onnx")])  # warm the file cache once
        plain, ours, other = [], [], []

        def export(i: int, tree: Path, tag: str) -> float:
            return timed([*studio_cmd, "export", str(tmp / "clip"), "--output", str(tmp / f"{tag}{i}" / "m.onnx"),
                          "--quiet"], cwd=tree)

        for i in range(args.reps):
            plain.append(timed([py, "-c", PLAIN, str(tmp / "clip"), str(tmp / f"plain{i}.onnx")]))
            if args.ab_tree is not None and i % 2:
                other.append(export(i, args.ab_tree, "ab"))
            ours.append(export(i, ROOT, "s"))
            if args.ab_tree is not None and not i % 2:
                other.append(export(i, args.ab_tree, "ab"))
            ab = f", ab-tree export {other[-1]:.2f} s" if other else ""
            print(f"rep {i + 1}: plain {plain[-1]:.2f} s, studio export {ours[-1]:.2f} s{ab}", flush=True)
        baseline = [timed([py, "-c", "pass"]) for _ in range(10)]
        version = [timed([*studio_cmd, "--version"]) for _ in range(10)]
    mp, mo = statistics.median(plain), statistics.median(ours)
    mv, mb = statistics.median(version), statistics.median(baseline)
    lines = [
        f"## Export: `studio export` tiny-clip vs plain torch.onnx.export + ORT parity (`bench/bench_export.py`, {date.today()})",
        "",
        f"Command: `.venv/bin/python -m bench.bench_export --reps {args.reps}"
        + (f" --ab-tree {args.ab_tree}" if args.ab_tree else "") + "`; fresh process per run, alternated,",
        "same folder, opset 17, TorchScript exporter, dynamic batch/sequence; 2-core shared machine.",
        "",
        "| run | median (s) | min (s) | max (s) |",
        "|---|---|---|---|",
        f"| plain script (load, export, full checker, ORT parity x2) | {mp:.2f} | {min(plain):.2f} | {max(plain):.2f} |",
        f"| `studio export` (+ shape inference, 3 parity cases, tokenizer check, companions) | {mo:.2f} | {min(ours):.2f} | {max(ours):.2f} |",
        f"| `studio --version` | {mv:.3f} | {min(version):.3f} | {max(version):.3f} |",
        f"| `python -c pass` (interpreter floor) | {mb:.3f} | {min(baseline):.3f} | {max(baseline):.3f} |",
        "",
        f"Ratio studio/plain: **{mo / mp:.2f}x** (target <= 1.3x). `studio --version`: **{mv:.3f} s** (target < 0.3 s).",
        "",
    ]
    if other:
        per = [o / a for o, a in zip(ours, other, strict=True)]
        lines[-1:-1] = [
            f"A/B against `{args.ab_tree}` (`--ab-tree`, same reps, order alternating): its `studio export` median "
            f"{statistics.median(other):.2f} s (min {min(other):.2f}, max {max(other):.2f}); this/other per rep: "
            f"{', '.join(f'{r:.2f}' for r in per)}; median **{statistics.median(per):.3f}x**.", ""]
    text = "\n".join(lines)
    print(text)
    if args.append:
        with (ROOT / "BENCHMARKS.md").open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

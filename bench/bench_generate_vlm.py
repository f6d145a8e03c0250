"""Qwen2-VL generation on CPU, side by side in one run: HF ``generate()`` (torch, KV cache) vs the studio VLM
runtime (vision graph + decoder with past on ORT) on the same exported tiny-qwen2-vl sample, image + text prompts.

Both paths get the same patches and grid (the studio's numpy processor; preprocessing is outside the clock for
both) and the same prompt ids, and run greedily: TTFT = patches in -> first new token (vision encoder + prefill +
sampling), tokens/s = new tokens / whole generation, decode tokens/s after the first token; medians over the
repeats, the paths taking turns (bench.bench_generate.measure). The token ids of both paths are checked equal.
onnxruntime-genai is not a path here: it has no form for this layout (it knows qwen2_5_vl's three graphs).

    .venv/bin/python -m bench.bench_generate_vlm [--new-tokens 32] [--repeats 7] [--threads 1] [--append FILE]
        [--source HF_DIR --export EXPORT_DIR]

``--source`` / ``--export``: a Qwen2-VL folder and its `studio export` (KV cache) instead of the tiny sample, e.g.
the 2B model at real size (bench.real_models qwen2-vl-2b): both paths hold the model at once (about 20 GB at 2B).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench_generate import (
    clock_type,
    command_line,
    compare_to_first,
    measure,
    path_table,
    publish,
    rss_mb,
)

# (prompt, image width x height): two image grids (4x4 -> 4 image tokens, 8x8 -> 16)
PROMPTS = [("describe the picture", (20, 20)), ("what is the colour of the car near the house?", (32, 32)),
           ("how many people are there in the picture of the red house?", (40, 24))]


def hf_path(src: Path, new: int, stops: list[int], pad: int | None) -> Callable[[Any], Any]:
    import torch
    from transformers import Qwen2VLForConditionalGeneration

    model = Qwen2VLForConditionalGeneration.from_pretrained(str(src)).eval()  # its default attention (sdpa)

    Clock = clock_type()  # noqa: N806

    def run(case: Any) -> tuple[list[int], float, float]:
        ids, image = case
        x = torch.tensor([ids])
        clock = Clock()
        t0 = time.perf_counter()
        model.model.rope_deltas = None
        with torch.no_grad():
            out = model.generate(x, attention_mask=torch.ones_like(x), pixel_values=torch.from_numpy(image.pixel_values),
                                 image_grid_thw=torch.from_numpy(image.grid_thw),
                                 mm_token_type_ids=(x == int(model.config.image_token_id)).int(),
                                 max_new_tokens=new, do_sample=False, use_cache=True, eos_token_id=stops,
                                 pad_token_id=pad, streamer=clock, temperature=None, top_k=None, top_p=None)
        total = time.perf_counter() - t0
        return out[0, len(ids):].tolist(), clock.times[1] - t0, total

    return run


def studio_path(gen: Any, new: int) -> Callable[[Any], Any]:
    """The runtime already opened to prepare the prompts (one copy of the model: at 2B a second is 10 GB)."""
    stops = set(gen.gen.eos_token_ids)

    def run(case: Any) -> tuple[list[int], float, float]:
        ids, image = case
        out = gen.runtime.generate(ids, [image], new, stop_ids=stops)
        return out.token_ids, out.ttft_s, out.total_s

    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="torch and ORT intra-op threads (same for both paths)")
    p.add_argument("--append", type=Path, default=None, help="append the markdown section to this file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--source", type=Path, default=None, help="a Qwen2-VL HF folder (default: the tiny sample)")
    p.add_argument("--export", type=Path, default=None, help="its `studio export` folder (with --source)")
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)

    import numpy as np
    import torch
    from PIL import Image

    from studio.export.api import ExportOptions, export_model, write_sample

    torch.set_num_threads(args.threads)
    if (args.source is None) != (args.export is None):
        raise SystemExit("--source and --export go together (an HF folder and its export)")
    with tempfile.TemporaryDirectory() as tmp:
        if args.source is not None:
            src, out = args.source, args.export / "model.onnx"
        else:
            src = write_sample("tiny-qwen2-vl", Path(tmp) / "tiny-qwen2-vl")
            out = Path(tmp) / "export" / "model.onnx"
            report = export_model(ExportOptions(model_dir=src, output=out, validation_cases=2))
            if report.status != "succeeded":
                raise SystemExit(f"export failed: {report.diagnosis}")
        from studio.generate.vlm import open_vlm

        before = rss_mb()
        g = open_vlm(out.parent, args.threads)
        studio_loaded = rss_mb() - before
        rng = np.random.default_rng(0)
        cases = []
        for text, (w, h) in PROMPTS:
            img = g.processor.from_pil(Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)))
            cases.append(((g.prepare(text, img)[0]), img))
        paths = {"HF generate() (torch, sdpa, KV cache)":
                 lambda: hf_path(src, args.new_tokens, g.gen.eos_token_ids, g.gen.pad_token_id),
                 "studio VLM runtime (ORT: vision graph + decoder with past, session.run)":
                 lambda: studio_path(g, args.new_tokens)}
        runners, loaded = {}, {}
        for name, make in paths.items():
            before = rss_mb()
            runners[name] = make()
            loaded[name] = rss_mb() - before if name.startswith("HF") else studio_loaded
        rows = {n: {**r, "rss_growth_mb": loaded[n]} for n, r in measure(runners, cases, args.repeats).items()}
    same = compare_to_first(rows)
    result = {"rows": {k: {kk: vv for kk, vv in v.items() if kk != "ids"} for k, v in rows.items()},
              "same_token_ids": same, "prompt_tokens": [len(c[0]) for c in cases],
              "images": [list(s) for _, s in PROMPTS], "new_tokens": args.new_tokens, "repeats": args.repeats,
              "threads": args.threads, "model": str(args.source) if args.source else "tiny-qwen2-vl sample"}
    publish(result, render(result, argv), args.json, args.append)
    return 0 if same else 1


def render(result: dict[str, Any], argv: list[str] | None) -> str:
    lines = ["## Qwen2-VL generation: studio VLM runtime vs HF generate() (`bench/bench_generate_vlm.py`)", "",
             f"{command_line('bench_generate_vlm', argv)} Model: {result['model']}; "
             f"images {result['images']} (w x h), prompts of {result['prompt_tokens']} tokens (image placeholders "
             f"included), {result['new_tokens']} new tokens, greedy, {result['threads']} intra-op thread(s) for torch "
             f"and ORT alike; medians over {result['repeats']} runs per prompt after a warm-up. TTFT = patches in -> "
             "first new token (vision encoder + prefill). Same token ids on both paths: "
             f"{'yes' if result['same_token_ids'] else 'NO'}.", "",
             *path_table(result["rows"])]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

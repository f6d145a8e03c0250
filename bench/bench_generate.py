"""Generation on CPU, side by side in one run: HF ``generate()`` vs the studio runtime (ORT, IO binding and a
preallocated cache; and the plain ``session.run`` loop) vs onnxruntime-genai (when installed) on the same
exported tiny decoder.

Per path: time to first token (prompt ids in -> first new token), tokens/s end to end (prefill included) and
decode tokens/s (after the first token), medians over the repeats, plus RSS growth when the path was loaded
(rough: one process, allocator reuse). Greedy everywhere; the token ids of every path are checked equal.

    .venv/bin/python -m bench.bench_generate [--model-dir DIR] [--new-tokens 64] [--repeats 7] [--threads 1]
        [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

PROMPTS = ["a photo of a cat", "what is the color of the car near the house?",
           "how many people are there in the picture of the red house with a green tree and a blue car"]


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def export(model_dir: Path | None, work: Path) -> tuple[Path, Path]:
    from studio.export.api import ExportOptions, export_model, write_sample

    src = model_dir or write_sample("tiny-qwen2", work / "tiny-qwen2")
    out = work / "export" / "model.onnx"
    report = export_model(ExportOptions(model_dir=Path(src), output=out, with_past=True))
    if report.status != "succeeded":
        raise SystemExit(f"export failed: {report.diagnosis}")
    return Path(src), out.parent


def measure(run: Callable[[list[int]], tuple[list[int], float, float]], prompts: list[list[int]],
            repeats: int) -> dict[str, Any]:
    """``run(ids) -> (new ids, ttft_s, total_s)``; one warm-up per prompt, then medians over every run."""
    ttft, tps, dtps, outs = [], [], [], []
    for ids in prompts:
        run(ids)
        for _ in range(repeats):
            toks, first, total = run(ids)
            ttft.append(first * 1e3)
            tps.append(len(toks) / total)
            if len(toks) > 1:
                dtps.append((len(toks) - 1) / (total - first))
        outs.append(toks)
    return {"ttft_ms": statistics.median(ttft), "tokens_per_s": statistics.median(tps),
            "decode_tokens_per_s": statistics.median(dtps) if dtps else None, "ids": outs}


def hf_path(src: Path, new: int, stops: list[int], pad: int | None) -> Callable[[list[int]], Any]:
    import torch
    from transformers import AutoModelForCausalLM
    from transformers.generation.streamers import BaseStreamer

    model = AutoModelForCausalLM.from_pretrained(str(src)).eval()  # its default attention (sdpa)

    class Clock(BaseStreamer):
        def __init__(self) -> None:
            self.times: list[float] = []

        def put(self, value: Any) -> None:
            self.times.append(time.perf_counter())

        def end(self) -> None:
            pass

    def run(ids: list[int]) -> tuple[list[int], float, float]:
        x = torch.tensor([ids])
        clock = Clock()
        t0 = time.perf_counter()
        with torch.no_grad():
            out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=new, do_sample=False,
                                 use_cache=True, eos_token_id=stops, pad_token_id=pad, streamer=clock)
        total = time.perf_counter() - t0
        return out[0, len(ids):].tolist(), clock.times[1] - t0, total

    return run


def studio_path(folder: Path, new: int, threads: int, io_binding: bool) -> Callable[[list[int]], Any]:
    from studio.generate.api import TextGenerator

    gen = TextGenerator(folder, threads=threads, io_binding=io_binding)
    stops = set(gen.gen.eos_token_ids)

    def run(ids: list[int]) -> tuple[list[int], float, float]:
        out = gen.runtime.generate(ids, new, stop_ids=stops)
        return out.token_ids, out.ttft_s, out.total_s

    return run


def genai_path(folder: Path, new: int, threads: int) -> Callable[[list[int]], Any] | None:
    try:
        import numpy as np
        import onnxruntime_genai as og
    except ImportError:
        return None
    cfg = og.Config(str(folder))
    cfg.clear_providers()
    model = og.Model(cfg)

    def run(ids: list[int]) -> tuple[list[int], float, float]:
        params = og.GeneratorParams(model)
        params.set_search_options(max_length=len(ids) + new, do_sample=False)
        t0 = time.perf_counter()
        g = og.Generator(model, params)
        g.append_tokens(np.asarray([ids], dtype=np.int32))
        toks: list[int] = []
        first = 0.0
        while not g.is_done():
            g.generate_next_token()
            toks.append(int(g.get_next_tokens()[0]))
            if len(toks) == 1:
                first = time.perf_counter() - t0
        return toks, first, time.perf_counter() - t0

    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model-dir", type=Path, default=None, help="HF decoder folder (default: the tiny-qwen2 sample)")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="torch and ORT intra-op threads (same for every path)")
    p.add_argument("--append", type=Path, default=None, help="append the markdown section to this file")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        src, folder = export(args.model_dir, Path(tmp))
        from studio.generate.config import read_generation
        from studio.generate.tokenizer import TextTokenizer

        gen = read_generation(folder)
        tok = TextTokenizer(folder)
        prompts = [tok.encode(t) for t in PROMPTS]
        paths: dict[str, Callable[[], Callable[[list[int]], Any] | None]] = {
            "HF generate() (torch, sdpa, KV cache)": lambda: hf_path(src, args.new_tokens, gen.eos_token_ids,
                                                                     gen.pad_token_id),
            "studio runtime (ORT, IO binding, preallocated cache)": lambda: studio_path(folder, args.new_tokens,
                                                                                        args.threads, True),
            "studio runtime (ORT, plain session.run)": lambda: studio_path(folder, args.new_tokens, args.threads,
                                                                           False),
            "onnxruntime-genai (studio graph + genai_config.json)": lambda: genai_path(folder, args.new_tokens,
                                                                                       args.threads),
        }
        rows: dict[str, dict[str, Any]] = {}
        for name, make in paths.items():
            before = rss_mb()
            run = make()
            if run is None:
                rows[name] = {"skipped": "not installed"}
                continue
            loaded = rss_mb() - before
            rows[name] = {**measure(run, prompts, args.repeats), "rss_growth_mb": loaded}
    base = next(iter(rows.values()))
    same = all(r.get("ids") == base["ids"] for r in rows.values() if "ids" in r)
    for r in rows.values():
        if "ids" in r:
            r["tps_vs_hf"] = r["tokens_per_s"] / base["tokens_per_s"]
            r["ttft_vs_hf"] = r["ttft_ms"] / base["ttft_ms"]
    result = {"rows": {k: {kk: vv for kk, vv in v.items() if kk != "ids"} for k, v in rows.items()},
              "same_token_ids": same, "prompt_tokens": [len(x) for x in prompts], "new_tokens": args.new_tokens,
              "repeats": args.repeats, "threads": args.threads, "model": str(args.model_dir or "tiny-qwen2 sample")}
    md = render(result, argv)
    print(json.dumps(result, indent=2) if args.json else md)
    if args.append:
        with args.append.open("a", encoding="utf-8") as f:
            f.write("\n" + md + "\n")
    return 0 if same else 1


def render(result: dict[str, Any], argv: list[str] | None) -> str:
    cmd = " ".join(["python -m bench.bench_generate", *(argv or [])]).strip()
    lines = ["## Generation: studio runtime vs HF generate() vs onnxruntime-genai (`bench/bench_generate.py`)", "",
             f"Command: `.venv/bin/{cmd}` ({datetime.now():%Y-%m-%d %H:%M}, {platform.machine()}, Python "
             f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}). Model: {result['model']}; "
             f"prompts of {result['prompt_tokens']} tokens, {result['new_tokens']} new tokens, greedy, "
             f"{result['threads']} intra-op thread(s) for torch and ORT alike; medians over "
             f"{result['repeats']} runs per prompt after a warm-up. Same token ids on every path: "
             f"{'yes' if result['same_token_ids'] else 'NO'}.", "",
             "| path | TTFT ms | tokens/s | decode tokens/s | tokens/s vs HF | TTFT vs HF | RSS growth MB |",
             "|---|---|---|---|---|---|---|"]
    for name, r in result["rows"].items():
        if "skipped" in r:
            lines.append(f"| {name} | {r['skipped']} | | | | | |")
            continue
        d = r["decode_tokens_per_s"]
        lines.append(f"| {name} | {r['ttft_ms']:.3f} | {r['tokens_per_s']:.0f} | {d:.0f} | "
                     f"{r['tps_vs_hf']:.1f}x | {r['ttft_vs_hf']:.2f}x | {r['rss_growth_mb']:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

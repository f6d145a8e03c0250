"""Generation on CPU, side by side in one run: HF ``generate()`` vs the studio runtime (ORT, IO binding and a
preallocated cache; and the plain ``session.run`` loop) vs onnxruntime-genai (when installed) on the same
exported tiny decoder.

Per path: time to first token (prompt ids in -> first new token), tokens/s end to end (prefill included) and
decode tokens/s (after the first token), medians over the repeats, plus RSS growth when the path was loaded
(rough: one process, allocator reuse). The paths take turns within each repeat (noise falls on all alike).
Greedy everywhere; the token ids of every path are checked equal. The studio paths run the fused-attention
variant (studio.generate.fused, the default); "fused=False" runs the exported graph as it is. Also: the prompt pass of the one graph with an
empty past vs a graph exported without a cache (what a separate prefill graph could at best save).

    .venv/bin/python -m bench.bench_generate [--model-dir DIR] [--new-tokens 64] [--repeats 7] [--threads 1]
        [--append BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

FUSED_NOTE = ["not run"]
PROMPTS = ["a photo of a cat", "what is the color of the car near the house?",
           "how many people are there in the picture of the red house with a green tree and a blue car"]


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def sample(work: Path, hidden: int, layers: int) -> Path:
    """The tiny-qwen2 sample, re-built wider / deeper when asked (same tokenizer, seeded weights)."""
    from studio.export.api import write_sample

    src = write_sample("tiny-qwen2", work / "tiny-qwen2")
    if (hidden, layers) != (32, 2):
        import torch
        from transformers import Qwen2Config, Qwen2ForCausalLM

        cfg = Qwen2Config.from_pretrained(str(src))
        cfg.hidden_size, cfg.num_hidden_layers = hidden, layers
        cfg.num_attention_heads, cfg.num_key_value_heads = max(4, hidden // 64), max(2, hidden // 128)
        cfg.intermediate_size, cfg.max_position_embeddings = int(hidden * 2.7), 512
        cfg.layer_types = ["full_attention"] * layers
        torch.manual_seed(0)
        Qwen2ForCausalLM(cfg).eval().save_pretrained(str(src))
    return src


def export(src: Path, work: Path, with_past: bool = True) -> Path:
    from studio.export.api import ExportOptions, export_model

    out = work / ("export" if with_past else "export-no-past") / "model.onnx"
    report = export_model(ExportOptions(model_dir=src, output=out, with_past=with_past, validation_cases=2))
    if report.status != "succeeded":
        raise SystemExit(f"export failed: {report.diagnosis}")
    return out.parent


def prefill_cost(with_past: Path, no_past: Path, prompts: list[list[int]], repeats: int,
                 threads: int) -> dict[str, float]:
    """Median prompt pass (ms) of the one graph with an empty past vs the graph exported without a cache (logits
    only: a lower bound for any separate prefill graph), alternated in one loop."""
    import numpy as np
    import onnxruntime as ort

    from studio.generate.config import read_generation
    from studio.generate.runtime import DecoderRuntime, session_options

    rt = DecoderRuntime(with_past / "model.onnx", read_generation(with_past), threads=threads, io_binding=False,
                        fused=False)  # the exported graphs side by side
    plain = ort.InferenceSession(str(no_past / "model.onnx"), session_options(threads),
                                 providers=["CPUExecutionProvider"])
    a: list[float] = []
    b: list[float] = []
    for ids in prompts:
        feeds = {"input_ids": np.asarray([ids], dtype=np.int64), "attention_mask": np.ones((1, len(ids)), np.int64)}
        for i in range(repeats + 1):
            step = rt._plain_step()  # a fresh, empty cache
            t0 = time.perf_counter()
            step(ids, 0)
            t1 = time.perf_counter()
            plain.run(["logits"], feeds)
            t2 = time.perf_counter()
            if i:  # the first pass of each prompt is a warm-up
                a.append((t1 - t0) * 1e3)
                b.append((t2 - t1) * 1e3)
    return {"one_graph_empty_past_ms": statistics.median(a), "no_cache_graph_ms": statistics.median(b)}


def measure(runs: dict[str, Callable[[list[int]], tuple[list[int], float, float]]], prompts: list[list[int]],
            repeats: int) -> dict[str, dict[str, Any]]:
    """``run(ids) -> (new ids, ttft_s, total_s)`` per path; one warm-up per prompt, then the paths take turns
    (each repeat runs every path once, in rotating order) so the machine's noise falls on all of them alike."""
    acc: dict[str, dict[str, list[Any]]] = {n: {"ttft": [], "tps": [], "dtps": [], "ids": []} for n in runs}
    names = list(runs)
    for ids in prompts:
        for name in names:
            runs[name](ids)
        last: dict[str, list[int]] = {}
        for rep in range(repeats):
            for name in names[rep % len(names):] + names[:rep % len(names)]:
                toks, first, total = runs[name](ids)
                a = acc[name]
                a["ttft"].append(first * 1e3)
                a["tps"].append(len(toks) / total)
                if len(toks) > 1:
                    a["dtps"].append((len(toks) - 1) / (total - first))
                last[name] = toks
        for name in names:
            acc[name]["ids"].append(last[name])
    return {n: {"ttft_ms": statistics.median(a["ttft"]), "tokens_per_s": statistics.median(a["tps"]),
                "decode_tokens_per_s": statistics.median(a["dtps"]) if a["dtps"] else None, "ids": a["ids"]}
            for n, a in acc.items()}


def clock_type() -> type:
    """A transformers streamer that only records when each put() came: put 0 is the prompt, put 1 the first new
    token (HF generate()'s TTFT), used by every generation bench's HF path."""
    from transformers.generation.streamers import BaseStreamer

    class Clock(BaseStreamer):
        def __init__(self) -> None:
            self.times: list[float] = []

        def put(self, value: Any) -> None:
            self.times.append(time.perf_counter())

        def end(self) -> None:
            pass

    return Clock


def hf_path(src: Path, new: int, stops: list[int], pad: int | None) -> Callable[[list[int]], Any]:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(src)).eval()  # its default attention (sdpa)
    Clock = clock_type()  # noqa: N806

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


def studio_path(folder: Path, new: int, threads: int, io_binding: bool, fused: bool = True
                ) -> Callable[[list[int]], Any]:
    from studio.generate.api import TextGenerator

    gen = TextGenerator(folder, threads=threads, io_binding=io_binding, fused=fused)
    if fused:
        FUSED_NOTE[0] = gen.runtime.fused_note  # said in the output: the tiny sample (head_dim 8) is not fused
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


def compare_to_first(rows: dict[str, dict[str, Any]]) -> bool:
    """Each measured path's tokens/s and TTFT as ratios of the first path's (HF generate()); True when every path
    produced the first one's token ids."""
    base = next(iter(rows.values()))
    for r in rows.values():
        if "ids" in r:
            r["tps_vs_hf"] = r["tokens_per_s"] / base["tokens_per_s"]
            r["ttft_vs_hf"] = r["ttft_ms"] / base["ttft_ms"]
    return all(r.get("ids") == base["ids"] for r in rows.values() if "ids" in r)


def command_line(module: str, argv: list[str] | None) -> str:
    """The markdown's "Command: ..." sentence start: the command, date, machine, Python, load average."""
    cmd = " ".join([f"python -m bench.{module}", *(argv or [])]).strip()
    return (f"Command: `.venv/bin/{cmd}` ({datetime.now():%Y-%m-%d %H:%M}, {platform.machine()}, Python "
            f"{platform.python_version()}, load average {os.getloadavg()[0]:.1f}).")


def path_table(rows: dict[str, dict[str, Any]]) -> list[str]:
    lines = ["| path | TTFT ms | tokens/s | decode tokens/s | tokens/s vs HF | TTFT vs HF | RSS growth MB |",
             "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        if "skipped" in r:
            lines.append(f"| {name} | {r['skipped']} | | | | | |")
            continue
        d = r["decode_tokens_per_s"]
        lines.append(f"| {name} | {r['ttft_ms']:.3f} | {r['tokens_per_s']:.0f} | {'-' if d is None else f'{d:.0f}'} | "
                     f"{r['tps_vs_hf']:.1f}x | {r['ttft_vs_hf']:.2f}x | {r['rss_growth_mb']:.1f} |")
    return lines


def publish(result: dict[str, Any], md: str, as_json: bool, append: Path | None) -> None:
    """Print the result (JSON or the markdown section) and append the section to ``append``."""
    print(json.dumps(result, indent=2) if as_json else md)
    if append:
        with append.open("a", encoding="utf-8") as f:
            f.write("\n" + md + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model-dir", type=Path, default=None, help="HF decoder folder (default: the tiny-qwen2 sample)")
    p.add_argument("--hidden", type=int, default=32, help="rebuild the sample with this hidden size (default 32)")
    p.add_argument("--layers", type=int, default=2, help="rebuild the sample with this many layers (default 2)")
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="torch and ORT intra-op threads (same for every path)")
    p.add_argument("--append", type=Path, default=None, help="append the markdown section to this file")
    p.add_argument("--json", action="store_true")
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        src = args.model_dir or sample(Path(tmp), args.hidden, args.layers)
        folder = export(src, Path(tmp))
        from studio.generate.config import read_generation
        from studio.generate.tokenizer import TextTokenizer

        gen = read_generation(folder)
        tok = TextTokenizer(folder)
        prompts = [tok.encode(t) for t in PROMPTS]
        paths: dict[str, Callable[[], Callable[[list[int]], Any] | None]] = {
            "HF generate() (torch, sdpa, KV cache)": lambda: hf_path(src, args.new_tokens, gen.eos_token_ids,
                                                                     gen.pad_token_id),
            "studio runtime (ORT, IO binding + preallocated cache)": lambda: studio_path(folder, args.new_tokens,
                                                                                        args.threads, True),
            "studio runtime (ORT, session.run: the default)": lambda: studio_path(folder, args.new_tokens, args.threads,
                                                                           False),
            "studio runtime (session.run, exported graph: fused=False)": lambda: studio_path(
                folder, args.new_tokens, args.threads, False, fused=False),
            "onnxruntime-genai (studio graph + genai_config.json)": lambda: genai_path(folder, args.new_tokens,
                                                                                       args.threads),
        }
        runners: dict[str, Callable[[list[int]], Any]] = {}
        loaded: dict[str, float] = {}
        rows: dict[str, dict[str, Any]] = {}
        for name, make in paths.items():
            before = rss_mb()
            run = make()
            if run is None:
                rows[name] = {"skipped": "not installed"}
                continue
            runners[name] = run
            loaded[name] = rss_mb() - before
        for name, row in measure(runners, prompts, args.repeats).items():
            rows[name] = {**row, "rss_growth_mb": loaded[name]}
        rows = {n: rows[n] for n in paths}
        prefill = prefill_cost(folder, export(src, Path(tmp), with_past=False), prompts, args.repeats,
                               args.threads)
    same = compare_to_first(rows)
    result = {"rows": {k: {kk: vv for kk, vv in v.items() if kk != "ids"} for k, v in rows.items()},
              "same_token_ids": same, "prompt_tokens": [len(x) for x in prompts], "new_tokens": args.new_tokens,
              "repeats": args.repeats, "threads": args.threads, "prefill": prefill, "fused": FUSED_NOTE[0],
              "model": str(args.model_dir or f"tiny-qwen2 sample (hidden {args.hidden}, {args.layers} layers)")}
    publish(result, render(result, argv), args.json, args.append)
    return 0 if same else 1


def render(result: dict[str, Any], argv: list[str] | None) -> str:
    lines = ["## Generation: studio runtime vs HF generate() vs onnxruntime-genai (`bench/bench_generate.py`)", "",
             f"{command_line('bench_generate', argv)} Model: {result['model']}; "
             f"prompts of {result['prompt_tokens']} tokens, {result['new_tokens']} new tokens, greedy, "
             f"{result['threads']} intra-op thread(s) for torch and ORT alike; medians over "
             f"{result['repeats']} runs per prompt after a warm-up. Same token ids on every path: "
             f"{'yes' if result['same_token_ids'] else 'NO'}. Fused attention (the studio paths' default): "
             f"{result['fused']}.", "", *path_table(result["rows"])]
    pf = result["prefill"]
    lines += ["", f"Prompt pass, median: one graph with an empty past {pf['one_graph_empty_past_ms']:.3f} ms vs the "
              f"graph exported without a cache {pf['no_cache_graph_ms']:.3f} ms "
              f"({pf['one_graph_empty_past_ms'] / pf['no_cache_graph_ms']:.2f}x; plain session.run both)."]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

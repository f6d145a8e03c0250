"""Speech generation on CPU, side by side in one run: HF Whisper ``generate()`` vs the studio's speech runtime
(encoder once with the cross K/V, decoder graph with past, ``session.run``) on the same exported tiny Whisper.

Per path: time to first token (log-mel features in -> first new token: the encoder and the first decoder step),
tokens/s end to end and decode tokens/s, medians over the repeats, the paths taking turns (bench_generate's
``measure``); greedy, the token ids of both paths checked equal. Also the sizes of the two graphs (the optimum
decoder / decoder_with_past pair would store the decoder's weights twice).

    .venv/bin/python -m bench.bench_generate_speech [--d-model 384] [--layers 4] [--new-tokens 31] [--repeats 7]
        [--threads 1] [--append BENCHMARKS.md]
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

CLIPS = [(0, 0.7), (1, 0.3), (3, 1.0)]  # (studio.export.stages.past_seq2seq.clip kind, seconds)


def sample(work: Path, d_model: int, layers: int) -> Path:
    """The tiny-whisper sample re-built at this width / depth (init_std 0.3 at width 32, scaled as
    1/sqrt(width): audio-dependent ids, parity within the default tolerance; seeded)."""
    import torch
    from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration

    from studio.export.api import write_sample

    src = write_sample("tiny-whisper", work / "tiny-whisper")
    cfg = WhisperConfig.from_pretrained(str(src))
    heads = max(4, d_model // 64)
    cfg.d_model, cfg.encoder_layers, cfg.decoder_layers = d_model, layers, layers
    cfg.encoder_attention_heads = cfg.decoder_attention_heads = heads
    cfg.encoder_ffn_dim = cfg.decoder_ffn_dim = 4 * d_model if d_model > 32 else 37
    cfg.num_hidden_layers, cfg.init_std = layers, 0.3 * (32 / d_model) ** 0.5  # activations as at width 32
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(cfg).eval()
    model.generation_config = GenerationConfig.from_pretrained(str(src))
    model.save_pretrained(str(src))
    return src


def export(src: Path, work: Path) -> Path:
    from studio.export.api import ExportOptions, export_model

    out = work / "export" / "model.onnx"
    report = export_model(ExportOptions(model_dir=src, output=out, with_past=True))
    if report.status != "succeeded":
        raise SystemExit(f"export failed: {report.diagnosis}")
    return out.parent


def hf_path(src: Path, new: int, start: int) -> Callable[[Any], tuple[list[int], float, float]]:
    import torch
    from transformers import WhisperForConditionalGeneration

    model = WhisperForConditionalGeneration.from_pretrained(str(src)).eval()  # its default attention (sdpa)

    Clock = clock_type()  # noqa: N806

    def run(feats: Any) -> tuple[list[int], float, float]:
        x = torch.from_numpy(feats)
        clock = Clock()
        t0 = time.perf_counter()
        with torch.no_grad():
            out = model.generate(x, max_new_tokens=new, do_sample=False, streamer=clock, return_dict_in_generate=True)
        total = time.perf_counter() - t0
        # the dict form keeps the start tokens first (the plain form drops them); times[0]: the start put in
        return out.sequences[0, start:].tolist(), clock.times[1] - t0, total

    return run


def studio_path(folder: Path, new: int, threads: int) -> Callable[[Any], tuple[list[int], float, float]]:
    from studio.generate.speech import SpeechGenerator

    gen = SpeechGenerator(folder, threads=threads)

    def run(feats: Any) -> tuple[list[int], float, float]:
        out = gen.runtime.generate(feats, new)
        return out.token_ids, out.ttft_s, out.total_s

    return run


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d-model", type=int, default=384, help="width of the rebuilt sample (whisper-tiny: 384)")
    p.add_argument("--layers", type=int, default=4, help="encoder and decoder layers (whisper-tiny: 4)")
    p.add_argument("--new-tokens", type=int, default=31, help="at most 31: the sample's 32 decoder positions")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--threads", type=int, default=1, help="torch and ORT intra-op threads (same for both paths)")
    p.add_argument("--append", type=Path, default=None, help="append the markdown section to this file")
    p.add_argument("--json", action="store_true")
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)

    import torch

    from studio.export.stages.past_seq2seq import clip

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        src = sample(Path(tmp), args.d_model, args.layers)
        folder = export(src, Path(tmp))
        from studio.generate.speech import SpeechGenerator

        probe = SpeechGenerator(folder)
        feats = [probe.features(clip(k, s, probe.gen.sampling_rate)) for k, s in CLIPS]
        sizes = {f.name: round(f.stat().st_size / 2**20, 2) for f in sorted(folder.glob("*.onnx"))}
        paths = {"HF generate() (torch, sdpa, KV cache)": lambda: hf_path(src, args.new_tokens, len(probe.gen.init_token_ids)),
                 "studio speech runtime (ORT, encoder once + decoder with past)":
                     lambda: studio_path(folder, args.new_tokens, args.threads)}
        runners: dict[str, Callable[[Any], Any]] = {}
        loaded: dict[str, float] = {}
        for name, make in paths.items():
            before = rss_mb()
            runners[name] = make()
            loaded[name] = rss_mb() - before
        rows = {n: {**r, "rss_growth_mb": loaded[n]} for n, r in measure(runners, feats, args.repeats).items()}
    same = compare_to_first(rows)
    result = {"rows": {k: {kk: vv for kk, vv in v.items() if kk != "ids"} for k, v in rows.items()},
              "same_token_ids": same, "new_tokens": [len(i) for i in next(iter(rows.values()))["ids"]], "repeats": args.repeats,
              "threads": args.threads, "graph_mb": sizes,
              "model": f"tiny-whisper sample rebuilt at d_model {args.d_model}, {args.layers}+{args.layers} layers "
                       "(1 s window, 16 mel bins, vocab 354)",
              "clips_s": [s for _, s in CLIPS]}
    publish(result, render(result, argv), args.json, args.append)
    return 0 if same else 1


def render(result: dict[str, Any], argv: list[str] | None) -> str:
    lines = ["## Speech generation: studio Whisper runtime vs HF generate() (`bench/bench_generate_speech.py`)", "",
             f"{command_line('bench_generate_speech', argv)} Model: {result['model']}; "
             f"clips of {result['clips_s']} s, {result['new_tokens']} new tokens, greedy, {result['threads']} "
             f"intra-op thread(s) for torch and ORT alike; medians over {result['repeats']} runs per clip after a "
             f"warm-up. Same token ids on both paths: {'yes' if result['same_token_ids'] else 'NO'}. Graphs (MB): "
             f"{result['graph_mb']}.", "",
             *path_table(result["rows"])]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())

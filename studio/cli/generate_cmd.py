"""`studio generate EXPORT_DIR --prompt TEXT [--image FILE] [...]`: run an exported decoder (or a Qwen2-VL export:
vision graph + decoder) locally and print the answer.

Exit codes: 0 generated; 2 bad input (no generation.json, an empty or too long prompt, --max-new-tokens < 1, a
negative --temperature, --top-p outside (0, 1], --image / --audio for a text-only model, an unreadable --image).
Torch is imported only for --hf-parity (HF generate() on the source folder as the reference).
"""

from __future__ import annotations

import argparse
import json
import sys

from studio.core.catalogue import _, tr


def _ids(text: str) -> list[int]:
    try:
        return [int(t) for t in text.replace(" ", "").split(",") if t]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of ids: {text!r}") from exc


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("export_dir", metavar="EXPORT_DIR",
                   help="folder written by `studio export --with-past` (model.onnx + generation.json + tokenizer)")
    p.add_argument("--prompt", default=None, help="the prompt text (encoded with the exported tokenizer)")
    p.add_argument("--prompt-ids", type=_ids, default=None, metavar="ID,ID,...",
                   help="the prompt as token ids instead of text")
    p.add_argument("--image", default=None, metavar="FILE", help="an image (vision-language models)")
    p.add_argument("--audio", default=None, metavar="FILE", help="an audio clip (speech models)")
    p.add_argument("--max-new-tokens", type=int, default=32, help="most new tokens (default 32)")
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default); > 0 samples")
    p.add_argument("--top-k", type=int, default=0, help="sample among the k most likely tokens (0 = off)")
    p.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling threshold (1.0 = off)")
    p.add_argument("--seed", type=int, default=None, help="random seed for sampling (repeatable runs)")
    p.add_argument("--stop-token-id", type=int, action="append", default=None, metavar="ID",
                   help="stop at this id (repeatable; default: the model's eos ids)")
    p.add_argument("--hf-parity", action="store_true",
                   help="also run HF generate() on the source HF folder (imports torch) and report the verdict")
    p.add_argument("--threads", type=int, default=1, help="ONNX Runtime intra-op threads (default 1)")
    p.add_argument("--runtime", choices=("studio", "genai"), default="studio",
                   help="the loop: the studio's ORT loop (default) or onnxruntime-genai, if installed, on the same "
                        "graph through the genai_config.json written at export")
    p.add_argument("--io-binding", action="store_true",
                   help="drive ONNX Runtime with IO binding and a preallocated cache (default: plain session.run, "
                        "as fast or faster on CPU; see BENCHMARKS.md)")
    p.add_argument("--stream", action="store_true", help="print the answer as it is generated")
    p.add_argument("--json", action="store_true", help="print token ids, text, ttft_ms, tokens_per_s as JSON")


def run(args: argparse.Namespace) -> int:
    from studio.core.errors import InputError
    from studio.generate.api import TextGenerator
    from studio.generate.config import export_kind, read_generation
    from studio.generate.sampling import SamplingOptions
    from studio.generate.speech_config import KIND
    from studio.generate.vlm import open_vlm

    if export_kind(args.export_dir) == KIND:  # a Whisper export: --audio (studio.cli.generate_speech)
        from studio.cli.generate_speech import run_speech

        return run_speech(args)
    read_generation(args.export_dir)  # a folder without a decoder is the first error, before the flags
    vlm = export_kind(args.export_dir) == "vlm"  # Qwen2-VL: --image (optional) + --prompt
    for flag, value in (("--image", None if vlm else args.image), ("--audio", args.audio)):
        if value is not None:
            raise InputError(f"{flag} given, but this model takes text only", offending=flag,
                             hint="pass --prompt TEXT; image and audio inputs come with the VLM and speech exports")
    if args.max_new_tokens < 1:
        raise InputError(f"--max-new-tokens must be >= 1, got {args.max_new_tokens}", offending="--max-new-tokens",
                         hint="for example --max-new-tokens 32")
    if args.threads is not None and args.threads < 1:
        raise InputError(f"--threads must be >= 1, got {args.threads}", offending="--threads", hint="for example 1")
    sampling = SamplingOptions(args.temperature, args.top_k, args.top_p, args.seed).check()
    gen = open_vlm(args.export_dir, args.threads, args.runtime, args.io_binding) if vlm else \
        TextGenerator(args.export_dir, threads=args.threads, io_binding=args.io_binding, runtime=args.runtime)
    image = {"image": args.image} if vlm else {}
    stream = args.stream and not args.json

    def show(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    result = gen.generate(args.prompt, prompt_ids=args.prompt_ids, max_new_tokens=args.max_new_tokens,
                          sampling=sampling, stop_token_ids=args.stop_token_id, hf_parity=args.hf_parity,
                          on_text=show if stream else None, **image)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    if stream:
        print()
    else:
        print(result.text)
    parity = result.hf_parity.get("this_prompt")
    verdict = "" if not isinstance(parity, dict) else \
        _(", HF parity: match") if parity["match"] else _(", HF parity: MISMATCH")
    print(tr("[{count} tokens, {finish}; ttft {ttft} ms, {speed} tokens/s{verdict}]", count=len(result.token_ids),
             finish=result.finish_reason, ttft=f"{result.ttft_ms:.2f}", speed=f"{result.tokens_per_s:.0f}",
             verdict=verdict), file=sys.stderr)
    return 0

"""The coverage table: every multimodal architecture in transformers' auto mappings, built tiny by one generic
shrinker and exported by the studio with its defaults; docs/coverage.md is written from the rows.

Rows come from the mappings (never a list here): image-text-to-text, speech seq2seq, zero-shot image
classification, audio CTC, visual question answering, and feature extraction models whose type has both a
tokenizer and an image processor or feature extractor (multimodal feature extraction). Each row runs in its own
process (bench/coverage_one.py) with a time limit. Usage:

    python -m bench.coverage [--types a,b] [--limit N] [--timeout S] [--out docs/coverage.md] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import studio.export  # noqa: F401 - its torchvision hook (studio.export.torchvision_compat), before transformers loads

ROOT = Path(__file__).resolve().parents[1]
# the architectures issue 34 measured before this work (run first; every other row follows in a seeded order)
ISSUE_TYPES = ("qwen2_5_vl", "qwen3_vl", "smolvlm", "llava_next", "idefics3", "pix2struct", "siglip2", "moonshine",
               "gemma3", "altclip", "blip-2")
TASKS = (("image-text-to-text", "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES"),
         ("speech-to-text", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES"),
         ("zero-shot-image-classification", "MODEL_FOR_ZERO_SHOT_IMAGE_CLASSIFICATION_MAPPING_NAMES"),
         ("audio-ctc", "MODEL_FOR_CTC_MAPPING_NAMES"),
         ("visual-question-answering", "MODEL_FOR_VISUAL_QUESTION_ANSWERING_MAPPING_NAMES"))


def architectures() -> list[tuple[str, str, str]]:
    """(model_type, class name, task) for every row, first mapping wins; then multimodal feature extraction."""
    from transformers.models.auto import modeling_auto
    from transformers.models.auto.feature_extraction_auto import FEATURE_EXTRACTOR_MAPPING_NAMES
    from transformers.models.auto.image_processing_auto import IMAGE_PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES

    rows: dict[str, tuple[str, str]] = {}
    for task, name in TASKS:
        for mt, cls in getattr(modeling_auto, name).items():
            rows.setdefault(mt, (cls if isinstance(cls, str) else cls[0], task))
    for mt, cls in modeling_auto.MODEL_MAPPING_NAMES.items():
        media = mt in IMAGE_PROCESSOR_MAPPING_NAMES or mt in FEATURE_EXTRACTOR_MAPPING_NAMES
        if media and mt in PROCESSOR_MAPPING_NAMES and mt in TOKENIZER_MAPPING_NAMES:
            rows.setdefault(mt, (cls if isinstance(cls, str) else cls[0], "feature-extraction"))
    return [(mt, cls, task) for mt, (cls, task) in sorted(rows.items())]


def run_row(model_type: str, cls: str, timeout: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"cov-{model_type}-") as tmp:
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-m", "bench.coverage_one", model_type, cls, tmp], cwd=ROOT,
                                  capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
        except subprocess.TimeoutExpired:
            return {"model_type": model_type, "class": cls, "built": True, "status": "timeout",
                    "diagnosis": {"stage": "?", "error_class": "timeout", "message": f"over {timeout} s",
                                  "fix": "run it alone: python -m bench.coverage --types " + model_type}}
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
        if proc.returncode != 0 or not lines:
            return {"model_type": model_type, "class": cls, "built": True, "status": "traceback",
                    "traceback": (proc.stderr or proc.stdout)[-3000:]}
        row = json.loads(lines[-1])
        row["seconds"] = round(time.perf_counter() - t0, 1)
        return row


def verdict(row: dict[str, Any]) -> str:
    """One word per row for the summary: exported (all modalities + parity), text-only, failed, not-built..."""
    if not row.get("built"):
        return "not built"
    if row.get("status") == "succeeded":
        mods = row.get("modalities") or {}
        if row.get("silently_lost"):
            return "lost modality"
        return "text only" if mods.get("text_only") else "exported"
    return {"traceback": "traceback", "timeout": "timeout"}.get(str(row.get("status")), "diagnosed")


def _cell(row: dict[str, Any]) -> str:
    d = row.get("diagnosis") or {}
    if not row.get("built"):
        return f"build: {row.get('build_error', '')[:140]}"
    if row.get("status") == "traceback":
        return "traceback (see the JSON)"
    if not d:
        notes = []
        if row.get("static"):
            notes.append(f"static {row['static']} axes")
        if str(row.get("exporter", "")).startswith("dynamo"):
            notes.append("dynamo fallback")
        if row.get("shrink_fit"):
            notes.append("rotary share fitted to the model's M-RoPE sections")
        return "; ".join(notes)
    text = f"{d.get('stage')}: {d.get('error_class')}"
    if d.get("module"):
        text += f" in {_md(str(d['module'])[:60])}"
    msg = _md(str(d.get("message", "")).replace("|", "/").replace("\n", " ")[:160])
    fix = _md(str(d.get("fix", "")).replace("|", "/").replace("\n", " ")[:140])
    return f"{text} — {msg} — fix: {fix}"


def _md(text: str) -> str:
    """A diagnosis as table text, not markup: code like ``proj[i](features[i])`` would read as a link, ``<x>`` as
    HTML, ``*`` / backticks as emphasis (and fail the docs' strict build)."""
    for ch in "\\`*[]<>":
        text = text.replace(ch, "\\" + ch)
    return text


def markdown(rows: list[dict[str, Any]], command: str, seconds: float) -> str:
    import onnxruntime
    import torch
    import transformers

    counts: dict[str, int] = {}
    for r in rows:
        counts[verdict(r)] = counts.get(verdict(r), 0) + 1
    built = [r for r in rows if r.get("built")]
    ok = counts.get("exported", 0)
    gen = [r for r in rows if r.get("with_past")]
    exact = [r for r in gen if r.get("generate") == "passed"]
    summary = (f"**{len(rows)} architectures** from transformers {transformers.__version__}'s auto mappings; "
               f"{len(built)} built tiny by the generic shrinker; **{ok} export with all their modalities and ONNX "
               f"Runtime parity** ({100 * ok / max(len(built), 1):.0f} % of those built, "
               f"{100 * ok / max(len(rows), 1):.0f} % of all rows); {len(gen)} with a KV cache, {len(exact)} "
               f"generate token-exact with HF; {counts.get('traceback', 0)} tracebacks; "
               f"{counts.get('lost modality', 0)} exports that silently lose a modality; "
               + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    head = ["# Export coverage", "",
            "Generated by `bench/coverage.py` (do not edit by hand). Each row is one architecture in transformers' "
            "auto mappings (image-text-to-text, speech-to-text, zero-shot image classification, audio CTC, visual "
            "question answering, multimodal feature extraction), built tiny from its config class by "
            "`bench/coverage_shrink.py` (one generic shrinker: no per-architecture code), saved with no processor "
            "or tokenizer files, and exported by `studio export` with its defaults: the example inputs come from "
            "the processor transformers maps to the type, every declared modality must reach an output, parity "
            "is ONNX Runtime vs PyTorch on three processor-made cases.", "",
            summary, "",
            f"Command: `{command}` ({seconds / 60:.0f} min on this machine; torch {torch.__version__}, "
            f"onnxruntime {onnxruntime.__version__}).", "",
            "| architecture | class | task | exports, all modalities | parity | with past | generate token-exact | "
            "diagnosis / notes |", "|---|---|---|---|---|---|---|---|"]
    body = []
    for r in rows:
        v = verdict(r)
        mods = ", ".join((r.get("modalities") or {}).get("exported", [])) if r.get("status") == "succeeded" else ""
        past = "yes" if r.get("with_past") else "-"
        gen_cell = {"passed": "yes", "failed": "no"}.get(str(r.get("generate")), "-")
        body.append(f"| {r['model_type']} | {r.get('class', '')} | {r.get('task', '')} | "
                    f"{'yes (' + mods + ')' if v == 'exported' else v} | {'yes' if r.get('parity') else '-'} | "
                    f"{past} | {gen_cell} | {_cell(r)} |")
    return "\n".join(head + body) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--types", default=None, help="comma-separated model types (default: every row)")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--out", default=None, help="markdown table to write (docs/coverage.md for the full run)")
    p.add_argument("--json", default=None, help="rows as JSON")
    p.add_argument("--from-json", default=None, help="render --out from rows a run wrote (a partial run included)")
    p.add_argument("--command", default=None, help="with --from-json: the command (and commit) that wrote the rows")
    p.add_argument("--minutes", type=float, default=0.0, help="with --from-json: how long that run took")
    args = p.parse_args(argv)
    if args.from_json:
        rows = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        total = len(architectures())
        text = markdown(rows, args.command or f"python -m bench.coverage --json {args.from_json} (rows {len(rows)} of "
                        f"{total})", 60 * args.minutes)
        if len(rows) < total:
            text = text.replace("# Export coverage\n", f"# Export coverage (partial: {len(rows)} of {total} rows)\n")
        Path(args.out or "docs/coverage.md").write_text(text, encoding="utf-8")
        print(text.split("\n\n")[2])
        return 0
    rows_in = architectures()
    if args.types:
        wanted = args.types.split(",")
        rows_in = [r for r in rows_in if r[0] in wanted]
    # the issue's ten first, then a seeded shuffle: a run stopped early is still a fair sample of the mappings
    first = [r for r in rows_in if r[0] in ISSUE_TYPES]
    rest = [r for r in rows_in if r[0] not in ISSUE_TYPES]
    random.Random(0).shuffle(rest)
    rows_in = first + rest
    rows_in = rows_in[: args.limit] if args.limit else rows_in
    t0 = time.perf_counter()
    rows = []
    for i, (mt, cls, task) in enumerate(rows_in):
        row = run_row(mt, cls, args.timeout)
        row["task"] = task
        rows.append(row)
        print(f"[{i + 1}/{len(rows_in)}] {mt}: {verdict(row)} {_cell(row)[:150]}", file=sys.stderr, flush=True)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1, default=str), encoding="utf-8")
    command = "python -m bench.coverage " + " ".join(argv if argv is not None else sys.argv[1:])
    text = markdown(rows, command.strip(), time.perf_counter() - t0)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text.split("\n\n")[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())

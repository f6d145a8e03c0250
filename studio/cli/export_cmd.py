"""`studio export MODEL_DIR|--model DIR|HUB_ID --output model.onnx ...` (also `multimodal-export`).

``--model`` takes a local folder or a hub id resolved from the local HuggingFace cache (never downloaded;
studio.export.model_source). Exit codes: 0 succeeded; 1 the export ran and failed (the report carries the
diagnosis); 2 bad input (missing or non-HF folder, hub id not in the cache, MODEL_DIR and --model both or
neither given, unknown modality / input name, bad flag value); 130 cancelled.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model_dir", metavar="MODEL_DIR", nargs="?", default=None,
                   help="local HuggingFace model folder (config.json + weights); or use --model")
    p.add_argument("--model", default=None, metavar="DIR|HUB_ID",
                   help="a local model folder, or a hub id (e.g. Qwen/Qwen2-VL-2B-Instruct) already in the local "
                        "HuggingFace cache (HF_HUB_CACHE / HF_HOME); never downloads")
    p.add_argument("--output", "-o", default="model.onnx",
                   help="ONNX file to write; parts, tokenizer and processor files go beside it (default model.onnx)")
    p.add_argument("--opset", type=int, default=17, help="ONNX opset (default 17)")
    p.add_argument("--dynamic", default=None,
                   help="axes to keep dynamic: axis names (batch,sequence), per-input input.axis=name "
                        "(pixel_values.2=height), or 'none' (default: the model's batch/sequence axes)")
    p.add_argument("--exporter", choices=("torchscript", "dynamo"), default="torchscript",
                   help="torch.onnx path: TorchScript tracing or torch.export (dynamo)")
    p.add_argument("--split-modalities", action="store_true",
                   help="also write one graph per encoder plus the fusion / decoder part")
    p.add_argument("--input-signature", default=None, metavar="MOD:NAME,...",
                   help="inputs to export, e.g. text:input_ids,text:attention_mask,vision:pixel_values")
    p.add_argument("--atol", type=float, default=1e-4, help="parity absolute tolerance (default 1e-4)")
    p.add_argument("--rtol", type=float, default=1e-3, help="parity relative tolerance (default 1e-3)")
    p.add_argument("--cases", type=int, default=3, help="random validation inputs (default 3, minimum 2)")
    p.add_argument("--attn-implementation", default=None, choices=("eager", "sdpa"),
                   help="load the model with this attention implementation")
    p.add_argument("--with-past", action=argparse.BooleanOptionalAction, default=None,
                   help="export the decoder with its KV cache (past_key_values.* in, present.* out) and validate "
                        "greedy generation against HF generate(); default: on for decoder models (decoder-only, "
                        "Qwen2-VL, Whisper); --no-with-past: the single-pass graph")
    p.add_argument("--precision", default=None, metavar="PART=PREC,...",
                   help="convert parts after export, e.g. vision=int8,text=fp16 (PART: a part name, a modality or "
                        "'model'; PREC: fp32, fp16, int8 (static, calibrated on the processor's images), "
                        "int8-dynamic); a part whose parity misses the tolerance stays FP32")
    p.add_argument("--precision-atol", type=float, default=None,
                   help="max abs diff a converted part may have vs its FP32 part (default: fp16 0.05, int8 none)")
    p.add_argument("--precision-min-cosine", type=float, default=None,
                   help="min cosine a converted part must keep vs its FP32 part (default: fp16 0.999, int8 0.98)")
    p.add_argument("--kv-cache-dtype", default="float32", choices=("float32", "float16"),
                   help="--with-past: past_key_values.* / present.* in this dtype (default float32)")
    p.add_argument("--external-data", action=argparse.BooleanOptionalAction, default=None,
                   help="weights in a data file beside each graph (model.onnx + model.onnx.data); default: when "
                        "they pass 1.8 GB (protobuf cannot hold 2 GB in one file); --no-external-data: one file")
    p.add_argument("--report", default=None, help="write the export report (JSON) here")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")


def model_dir_of(args: argparse.Namespace) -> Path:
    """MODEL_DIR or --model (exactly one); --model may be a hub id from the local cache."""
    from studio.core.errors import InputError

    if args.model_dir is not None and args.model is not None:
        raise InputError(f"both MODEL_DIR ({args.model_dir}) and --model ({args.model}) given",
                         offending="--model", hint="pass the model once: MODEL_DIR or --model DIR|HUB_ID")
    if args.model_dir is None and args.model is None:
        raise InputError("no model given", offending="MODEL_DIR / --model",
                         hint="pass a local HuggingFace folder (MODEL_DIR or --model DIR) or --model ORG/NAME "
                              "for a model in the local HuggingFace cache")
    if args.model is not None:
        from studio.export.model_source import resolve_model

        return resolve_model(args.model)
    return Path(args.model_dir)


def run(args: argparse.Namespace) -> int:
    from studio.cli.progress import job_progress
    from studio.export.api import ExportOptions, export_model

    options = ExportOptions(
        model_dir=model_dir_of(args), output=Path(args.output), input_signature=args.input_signature,
        opset=args.opset, dynamic=None if args.dynamic is None else args.dynamic.split(","),
        exporter=args.exporter, split_modalities=args.split_modalities, atol=args.atol, rtol=args.rtol,
        report=Path(args.report) if args.report else None, validation_cases=args.cases,
        attn_implementation=args.attn_implementation, with_past=args.with_past, precision=args.precision,
        precision_atol=args.precision_atol, precision_min_cosine=args.precision_min_cosine,
        kv_cache_dtype=args.kv_cache_dtype, external_data=args.external_data)
    with stdout_to_stderr(args.json), job_progress("export", enabled=not args.quiet) as job:
        report = export_model(options, job)  # with --json, exporter chatter (C++ included) goes to stderr
    if args.json:
        print(report.to_json())
    else:
        print(render_summary(report))
    return 0 if report.status == "succeeded" else 1


@contextmanager
def stdout_to_stderr(active: bool) -> Iterator[None]:
    """File descriptor 1 pointed at stderr while the export runs: the TorchScript exporter's C++ log ("Torch IR
    graph at exception") and any library print bypass sys.stdout, and --json stdout must be the report alone."""
    if not active:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def render_summary(report) -> str:  # type: ignore[no-untyped-def]
    """The human summary: status, files, validation table, warnings, diagnosis (labels in the user's language;
    names, paths, numbers and the core's own messages as they are)."""
    v = report.validation
    lines = [tr("export {status}: {model} ({cls})", status=_(report.status), model=report.model_dir,
                cls=report.model_class or report.model_type)]
    for o in report.outputs:
        lines.append("  " + tr("wrote {path}  [{kind}]", path=o.path,
                               kind=o.kind + ("/" + o.modality if o.modality else "")))
    lines += input_lines(report)
    opset = tr("opset {opset}", opset=report.opset) + "   " if getattr(report, "opset", None) else ""
    lines.append("  " + opset + tr("checker: {checker}   shape inference: {shapes}   ORT load: {ort}",
                                   checker=_(v.checker), shapes=_(v.shape_inference), ort=_(v.ort_load)))
    for name, info in report.parts.items():
        if info.get("path"):
            ins = ", ".join(f"{k}{v}" for k, v in info["inputs"].items())
            outs = ", ".join(f"{k}{v}" for k, v in info["outputs"].items())
            how = info["modality"] + (", " + _("standalone") if info.get("standalone") else "")
            lines.append("  " + tr("part {name} ({how}): {inputs} -> {outputs}", name=f"{name:<8}", how=how,
                                   inputs=ins, outputs=outs))
    for c in v.cases:
        worst = max(c.outputs, key=lambda o: o.max_abs, default=None)
        detail = tr("max abs {value} ({output})", value=f"{worst.max_abs:.2e}", output=worst.output) if worst else ""
        lines.append(f"  {'ok  ' if c.passed else 'FAIL'} {c.graph:<14} {cell(_(c.name), 38)} {detail}"
                     + (f"  {c.error[:160]}" if c.error else ""))
    g = getattr(report, "generation", None)
    if g is not None and g.cache:
        c = g.cache
        lines.append("  " + tr("with past: {layers} layers x key/value ({layout}) kv_heads {kv_heads} head_dim "
                               "{head_dim} {dtype}, max context {context}", layers=c["layers"], layout=c["layout"],
                               kv_heads=c["kv_heads"], head_dim=c["head_dim"], dtype=c["dtype"],
                               context=c["max_context"]))
        lines.append("  " + tr("generation vs HF generate(): {status} on {n} prompts", status=_(g.status),
                               n=len(g.prompts))
                     + (tr(", per-step logits max abs {value}", value=f"{g.logits_max_abs:.2e}")
                        if g.logits_max_abs is not None else ""))
    lines += precision_lines(getattr(report, "precision", None))
    if report.tokenizer_class:
        lines.append("  " + tr("tokenizer: {cls} (expected {expected})", cls=report.tokenizer_class,
                               expected=report.expected_tokenizer_class or "?"))
    for w in report.warnings:
        lines.append("  " + tr("warning: {message}", message=_(w)))
    d = report.diagnosis
    if d is not None:
        lines.append("  " + tr("failed at stage '{stage}': {error_class}", stage=d.stage, error_class=d.error_class))
        lines.append(f"    {d.message}")
        where = ", ".join(x for x in (tr("module {name}", name=d.module) if d.module else "",
                                      tr("node {name}", name=d.node) if d.node else "",
                                      tr("op {name}", name=d.op_type) if d.op_type else "") if x)
        if where:
            lines.append("    " + tr("at: {where}", where=where))
        lines.append("    " + tr("fix: {fix}", fix=d.fix))
        lines.append("    " + _("(the raw log is in the report: --report report.json or --json)"))
    timings = ", ".join(f"{stage_word(k)} {v:.1f}s" for k, v in report.timings.items())
    lines.append("  " + tr("timings: {timings}", timings=timings))
    peaks = getattr(report, "peak_rss_gb", None) or {}
    if peaks:
        top = max(peaks.values())
        first = next(k for k, v in peaks.items() if v == top)
        lines.append("  " + tr("peak memory: {gb} GB RSS (reached in stage '{stage}')", gb=f"{top:.2f}", stage=stage_word(first)))
    return "\n".join(lines)


# the words the report keeps in English (its JSON), shown in the user's language
STAGES = {"inputs": N_("inputs"), "load": N_("load"), "export": N_("export"), "check": N_("check"),
          "parity": N_("parity"), "write": N_("write"), "split": N_("split"), "precision": N_("precision"),
          "generation": N_("generation"), "total": N_("total")}
ORIGINS = {"folder": N_("folder"), "derived": N_("derived"), "folder+derived": N_("folder+derived")}


def stage_word(stage: str) -> str:
    """An export stage's name (report.timings, report.peak_rss_gb) in the user's language; an unknown one as is."""
    return _(STAGES[stage]) if stage in STAGES else stage


def prompt_text(text: str) -> str:
    """The report's prompt form (studio.export.processor_inputs.describe: pieces joined by ", ", each an N_
    template) in the user's language."""
    if text == "prompt with no placeholder":
        return _(N_("prompt with no placeholder"))
    if text.startswith("prompt with "):
        return tr("prompt with {parts}", parts=prompt_text(text[len("prompt with "):]))
    return ", ".join(_(piece) for piece in text.split(", ")) if text else text


def input_lines(report) -> list[str]:  # type: ignore[no-untyped-def]
    """The signature with dims, where the example inputs came from, what was added, the modalities exported."""
    out = []
    if report.signature:
        sig = ", ".join(f"{s.modality}:{s.name}[{','.join(s.dynamic_axes.get(i, str(d)) for i, d in enumerate(s.example_shape))}]"
                        for s in report.signature)
        out.append("  " + tr("inputs: {signature}", signature=sig))
    ex = getattr(report, "example_inputs", None) or {}
    if ex.get("processor"):
        out.append("  " + tr("example inputs: {processor} ({origin}), {prompt}", processor=ex["processor"],
                             origin=_(ORIGINS.get(ex.get("origin", "?"), ex.get("origin", "?"))),
                             prompt=prompt_text(ex.get("prompt", "")))
                   + (tr("; added: {names}", names=", ".join(ex["added"])) if ex.get("added") else "")
                   + (tr("; static {axes} axes", axes=ex["static"]) if ex.get("static") else ""))
    mods = getattr(report, "modalities", None) or {}
    if mods:
        line = "  " + tr("modalities: {exported} (declared: {declared})", exported=", ".join(mods.get("exported", [])),
                         declared=", ".join(mods.get("declared", [])))
        out.append(line + ("  " + _("TEXT ONLY (asked)") if mods.get("text_only") else ""))
    return out


def precision_lines(prec: dict | None) -> list[str]:  # type: ignore[type-arg]
    """One line per converted part: precision, figures vs the FP32 part and vs HF, the fallback if taken."""
    if not prec:
        return []
    out = []
    for name, r in prec.get("parts", {}).items():
        f32, hf = r["vs_fp32"], r["vs_hf"]
        kv = f" + KV {r['kv_cache_dtype']}" if r.get("kv_cache_dtype") else ""
        out.append("  " + tr("precision {part} {applied} (asked {asked}): vs FP32 part max abs {f32_abs} cosine "
                             "{f32_cos}; vs HF max abs {hf_abs} cosine {hf_cos}; {before} -> {after} bytes",
                             part=f"{name:<9}", applied=r["applied"] + kv, asked=r["requested"],
                             f32_abs=f"{f32['max_abs']:.2e}", f32_cos=f"{f32['cosine']:.6f}",
                             hf_abs=f"{hf['max_abs']:.2e}", hf_cos=f"{hf['cosine']:.6f}",
                             before=r["size_bytes_fp32"], after=r["size_bytes"])
                   + ("  " + tr("FALLBACK {why}", why=r["fallback"]) if r.get("fallback") else ""))
    chain = prec.get("chain_vs_hf")
    if chain:
        out.append("  " + tr("precision chain (as converted) vs HF: max abs {value} cosine {cosine}",
                             value=f"{chain['max_abs']:.2e}", cosine=f"{chain['cosine']:.6f}"))
    return out


def alias_main(argv: Sequence[str] | None = None) -> int:
    """`multimodal-export MODEL_DIR|--model DIR|HUB_ID ...`: the same flags as `studio export`."""
    from studio.cli.main import run_command

    if "_ARGCOMPLETE" in os.environ:  # a shell's Tab (studio.cli.completion)
        from studio.cli.completion import complete_and_exit

        complete_and_exit("multimodal-export")
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    return run_command("export", argv, prog="multimodal-export", debug=debug)


if __name__ == "__main__":
    sys.exit(alias_main())

"""A Triton model for a generation export (``studio export --with-past``): one Python-backend decoupled model.

``build_repo`` hands an export folder holding ``generation.json`` (or its .onnx file) here. The model's version
folder holds the decoder graph and its external data, generation.json / genai_config.json, the tokenizer files
and ``model.py`` (studio/triton/pymodels/generate_model.py); config.pbtxt declares
``model_transaction_policy { decoupled: true }``, ``text_input`` (BYTES) with optional sampling inputs, and
``text_output`` (BYTES), which is what Triton's ``/v2/models/NAME/generate`` and ``generate_stream`` need.
A VLM export (kind "vlm") carries its vision graph and preprocessor_config.json, a Whisper export
("encoder-decoder") its encoder graph and processor_config.json (its ``text_input`` is optional); their ``image``
/ ``audio`` inputs are BYTES holding the file's bytes, raw or base64 (a generate body's JSON string is base64).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError
from studio.triton import config as tc
from studio.triton import repo_files as rf

GENERATION_FILE = "generation.json"
CARRIED = ("generation.json", "genai_config.json", "tokenizer.json", "tokenizer_config.json",
           "special_tokens_map.json", "vocab.json", "merges.txt", "added_tokens.json", "generation_config.json",
           "config.json", "chat_template.json", "preprocessor_config.json", "processor_config.json")
# name, Triton type, dims, optional
INPUTS = (("text_input", "TYPE_STRING", [1], False), ("max_tokens", "TYPE_INT32", [1], True),
          ("max_new_tokens", "TYPE_INT32", [1], True), ("temperature", "TYPE_FP32", [1], True),
          ("top_k", "TYPE_INT32", [1], True), ("top_p", "TYPE_FP32", [1], True), ("seed", "TYPE_INT64", [1], True),
          ("stop", "TYPE_STRING", [-1], True), ("stream", "TYPE_BOOL", [1], True),
          ("image", "TYPE_STRING", [1], True), ("audio", "TYPE_STRING", [1], True))


def generation_folder(model: Path) -> Path | None:
    """The export folder when ``model`` (a folder or its .onnx file) is a generation export, else None."""
    folder = model if model.is_dir() else model.parent
    return folder if (folder / GENERATION_FILE).is_file() else None


def generation_config(name: str, record: dict[str, Any], instances: int) -> Any:
    """config.pbtxt of the decoupled generate model (no batching: one generation per request)."""
    m = tc.pb2()
    cfg = m.ModelConfig(name=name, backend="python", max_batch_size=0)
    cfg.model_transaction_policy.decoupled = True
    speech = record.get("kind") == "encoder-decoder"  # Whisper: the audio is the input, no text prompt
    for iname, dtype, dims, optional in INPUTS:
        optional = optional or (speech and iname == "text_input")
        cfg.input.append(m.ModelInput(name=iname, data_type=m.DataType.Value(dtype), dims=dims, optional=optional))
    cfg.output.append(m.ModelOutput(name="text_output", data_type=m.DataType.Value("TYPE_STRING"), dims=[-1]))
    cfg.instance_group.append(m.ModelInstanceGroup(kind=m.ModelInstanceGroup.KIND_CPU, count=max(1, instances)))
    tc.set_parameter(cfg, "studio_flavor", "python-generate (decoupled; studio.generate ORT loop)")
    tc.set_parameter(cfg, "generation_kind", str(record.get("kind") or "decoder-only"))
    tc.set_parameter(cfg, "max_context", str(record.get("max_context", "")))
    tc.set_parameter(cfg, "intra_op_threads", "1")
    return cfg


def add_generation_model(opts: Any, folder: Path, report: Any, job: Any) -> Any:
    """NAME as a decoupled generate model (see the module docstring); the report names it the entry model."""
    from studio.triton.pymodels import GENERATE_MODEL
    from studio.triton.repo_report import BuiltModel

    try:
        record = json.loads((folder / GENERATION_FILE).read_text(encoding="utf-8"))
        onnx = folder / str(record.get("model_file") or record["decoder_file"])  # Whisper: decoder_file
        parts = [folder / str(f) for f in [*(record.get("parts") or {}).values(), record.get("encoder_file")]
                 if f and folder / str(f) != onnx]  # the vision graph / speech encoder the loop runs too
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{folder / GENERATION_FILE} is unreadable: {exc}", offending=str(folder),
                         hint="re-export the model with `studio export --with-past`") from exc
    missing = [f for f in (onnx, *parts) if not f.is_file()]
    if missing:
        raise InputError(f"{missing[0]} named by {GENERATION_FILE} is missing", offending=str(missing[0]),
                         hint="re-export the model with `studio export --with-past`")
    job.set_status(f"writing {opts.name} (decoupled generate model)")
    model_dir = opts.repo / opts.name
    v = opts.version or rf.next_version(model_dir)
    cfg = generation_config(opts.name, record, opts.instance_count)

    def fill(tmp: Path) -> None:
        for graph in (onnx, *parts):
            rf.copy_onnx(graph, tmp, graph.name)
        for f in CARRIED:
            if (folder / f).is_file():
                shutil.copy2(folder / f, tmp / f)
        shutil.copy2(GENERATE_MODEL, tmp / "model.py")
        if opts.sign_key is not None:
            rf.sign_version(tmp, opts.name, v, opts.sign_key)

    rf.write_version(model_dir, v, fill)
    rf.write_env(model_dir, opts.site_packages or rf.default_site_packages())
    if opts.trust:
        rf.install_trust(model_dir, cfg, opts.trust)
    tc.write_config(model_dir / "config.pbtxt", cfg)
    report.models.append(BuiltModel(opts.name, "generate", "python", v, str(model_dir), tc.config_to_dict(cfg)))
    report.entry_model = opts.name
    report.warnings.append(N_("a generation export: one decoupled Python-backend model running the studio's ORT "
                              "loop (Triton's generate / generate_stream); --flavor and batching options do not apply"))
    job.set_progress(100.0)
    return report

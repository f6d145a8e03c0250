"""Stage "load": the HF model from its folder, and what clients will need beside the ONNX file (tokenizer, processor).

Why the probes run here: a tokenizer or processor that does not load is a warning in the report (clients bring
their own), never a failed export, and the user learns it before the long export starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.core.errors import InputError, StudioError
from studio.export.contract import ExportReport, InputSpec
from studio.export.stages.run import ExportRun, fail

PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json")


def load_source(run: ExportRun) -> Any:
    """``from_pretrained`` of the recipe's model class in eval mode; a broken checkpoint is a diagnosed "load"
    failure, a signature naming inputs the model's forward lacks an InputError."""
    import torch  # noqa: F401 - heavy, only now
    from transformers.utils import logging as hf_logging

    from studio.export import diagnose as dg
    from studio.export.signatures import model_class

    options = run.options
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        cls = model_class(run.recipe)
        kw: dict[str, Any] = {}
        attn = getattr(options, "attn_implementation", None)
        if attn:
            kw["attn_implementation"] = attn
        model = cls.from_pretrained(str(options.model_dir), **kw).eval()
    except StudioError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken checkpoint is a diagnosed failure
        diag = dg.diagnose_exception("load", exc)
        diag.error_class = "load_error" if diag.error_class in ("unknown", "exporter_error") else diag.error_class
        diag.fix = diag.fix if diag.error_class != "load_error" else \
            "check that the weights match config.json (re-save with save_pretrained)"
        fail(run, diag)
    run.report.model_class = type(model).__name__
    check_forward(model, [s for s in run.specs if not s.name.startswith("past_key_values.")  # the cache wrapper's
                          and not (options.with_past and s.name == "image_embeds")])  # VLM decoder: merged inside
    return model


def check_forward(model: Any, specs: list[InputSpec]) -> None:
    """Every signature input must be a parameter of the model's forward (unless it takes only ``**kwargs``)."""
    import inspect

    params = inspect.signature(type(model).forward).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()) and len(params) <= 2:
        return
    unknown = [s.name for s in specs if s.name not in params]
    if unknown:
        raise InputError(f"{type(model).__name__} has no input named '{unknown[0]}'", offending=unknown[0],
                         hint=f"inputs of this model: {', '.join(n for n in params if n != 'self')}")


def probe_tokenizer(model_dir: Path, config: dict[str, Any], report: ExportReport) -> None:
    """The tokenizer class clients get, and warnings when it is missing, unexpected, or has ids past the vocab."""
    from studio.export.diagnose import diagnose_tokenizer

    tok_cfg = model_dir / "tokenizer_config.json"
    found = None
    if tok_cfg.is_file():
        try:
            found = json.loads(tok_cfg.read_text(encoding="utf-8")).get("tokenizer_class")
        except ValueError:
            report.warnings.append("tokenizer_config.json is not valid JSON")
    if found is None and ((model_dir / "tokenizer.json").is_file() or (model_dir / "vocab.json").is_file()):
        found = "PreTrainedTokenizerFast"
    report.tokenizer_class = found
    if found is None:
        report.warnings.append(N_("no tokenizer files in the model folder: clients must bring their own"))
        return
    warning = diagnose_tokenizer(found, report.expected_tokenizer_class, report.model_type)
    if warning:
        report.warnings.append(warning)
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(model_dir))
        text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
        vocab = text.get("vocab_size") or config.get("vocab_size")
        if vocab and len(tok) > int(vocab):
            ids = len(tok)
            report.warnings.append(N_(f"tokenizer_mismatch: the tokenizer has {ids} ids but the embedding table "
                                      f"has {vocab}: ids >= {vocab} will fail at inference"))
    except Exception as exc:  # noqa: BLE001 - a tokenizer that does not load is worth a warning, not a failure
        report.warnings.append(f"tokenizer does not load with AutoTokenizer: {str(exc).splitlines()[0][:200]}")


def probe_processor(model_dir: Path, report: ExportReport) -> None:
    """Which processor class clients get from ``AutoProcessor``; a warning with a way out when it does not load."""
    if not any((model_dir / f).is_file() for f in PROCESSOR_FILES):
        return
    try:
        from transformers import AutoProcessor

        report.processor_class = type(AutoProcessor.from_pretrained(str(model_dir))).__name__
    except Exception as exc:  # noqa: BLE001 - the export does not need it; clients do
        text = str(exc).strip()
        if "torchvision" in text.lower():
            report.warnings.append(
                "processor_needs_torchvision: AutoProcessor for this folder builds a processor whose video processor "
                f"needs torchvision, which is not installed ({text.splitlines()[0][:160]}). Clients can install the "
                "torchvision release paired with their torch, or load AutoImageProcessor and AutoTokenizer from this "
                "folder separately (both work without torchvision; the image processor gives pixel_values and "
                "image_grid_thw)")
        else:
            first = text.splitlines()[0][:200] if text else type(exc).__name__
            report.warnings.append(f"processor does not load with AutoProcessor: {first}")

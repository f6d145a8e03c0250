"""A tiny Qwen2 exported with its KV cache for the serving tests: its context raised to 4096 so that a long
generation lasts seconds (the cancellation tests close a stream while it is surely still running)."""

from __future__ import annotations

import json
from pathlib import Path

CONTEXT = 4096


def export_long_context(root: Path) -> Path:
    """tiny-qwen2 with max_position_embeddings CONTEXT, exported like ``studio export --with-past``; the folder."""
    from studio.export.api import ExportOptions, export_model, write_sample

    src = write_sample("tiny-qwen2", root / "tiny-qwen2")
    cfg = json.loads((src / "config.json").read_text())
    cfg["max_position_embeddings"] = CONTEXT
    (src / "config.json").write_text(json.dumps(cfg, indent=2))
    out = root / "export" / "model.onnx"
    rep = export_model(ExportOptions(model_dir=src, output=out))
    assert rep.status == "succeeded", rep.diagnosis
    return out.parent

"""The generation record of a ``--with-past`` export (generation.json: cache layout, special ids, max context,
the source folder), built from the export run. Apart from the "generation" stage so that the VLM stage
(``vlm_generation``, which the generation stage dispatches to) builds on it without importing that stage.
"""

from __future__ import annotations

import json
from pathlib import Path

from studio.export.stages.run import ExportRun
from studio.generate.config import GenerationConfig, layout_from_config, special_ids, text_config


def generation_config(run: ExportRun) -> GenerationConfig:
    """The record ``studio generate`` reads: cache layout, special ids, max context, the source folder."""
    cfg = run.config
    gen_file = run.options.model_dir / "generation_config.json"
    try:
        gcfg = json.loads(gen_file.read_text(encoding="utf-8")) if gen_file.is_file() else {}
    except ValueError:
        gcfg = {}
        run.report.warnings.append("generation_config.json is not valid JSON: special ids come from config.json")
    t = text_config(cfg)
    max_context = int(t.get("max_position_embeddings") or t.get("n_positions") or 2048)
    cache = layout_from_config(cfg)
    from studio.export.stages.precision import cache_dtype_of  # the graph's cache type (--kv-cache-dtype)

    cache.dtype = cache_dtype_of(run.model_path) or cache.dtype
    return GenerationConfig(model_file=run.options.output.name, model_type=str(cfg.get("model_type")),
                            cache=cache, max_context=max_context,
                            inputs=list(run.input_names), outputs=["logits", *layout_from_config(cfg).present_names()],
                            source_model_dir=str(Path(run.options.model_dir).resolve()),
                            **special_ids(cfg, gcfg))

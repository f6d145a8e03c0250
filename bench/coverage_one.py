"""One row of the coverage table: build one architecture tiny (bench.coverage_shrink), export it with the studio,
and check the result independently of the studio's own verdict (every declared modality reaches an output).

Run as ``python -m bench.coverage_one MODEL_TYPE CLASS WORKDIR`` by bench/coverage.py (one process per row, so a
crash or a hang costs one row); prints one JSON object on the last line of stdout.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import studio.export  # noqa: F401 - its torchvision hook (studio.export.torchvision_compat), before transformers loads


def build(model_type: str, class_name: str, folder: Path) -> dict[str, Any]:
    """The tiny model, seeded, saved with save_pretrained (config + weights only: no processor, no tokenizer); a
    default whose rotary size its own model code contradicts is fitted first (``shrink_fit`` in the row)."""
    import torch
    import transformers
    from transformers import CONFIG_MAPPING

    from bench.coverage_shrink import fit_rotary_sections, shrink_config

    config = shrink_config(CONFIG_MAPPING[model_type]())
    torch.manual_seed(0)
    model = getattr(transformers, class_name)(config).eval()
    fitted = fit_rotary_sections(model)
    if fitted:  # the config changed in place (its sub-configs are the modules' own): built again from it
        torch.manual_seed(0)
        model = getattr(transformers, class_name)(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    return {"parameters": int(sum(p.numel() for p in model.parameters())), **({"shrink_fit": fitted} if fitted else {})}


def independent_check(report: Any) -> dict[str, Any]:
    """The exported graph, read again: which signature modalities some output depends on."""
    import onnx

    from studio.export.modalities import consumed_inputs

    graphs = [o.path for o in report.outputs if o.kind in ("model", "part") and o.path.endswith(".onnx")]
    if not graphs:
        return {}
    reached: set[str] = set()
    for path in graphs:  # a generation export's encoder / vision part takes the media, its decoder the text
        reached |= consumed_inputs(onnx.load(path, load_external_data=False))
    from studio.export.signatures import modality_of

    named = {s.name: s.modality for s in report.signature}
    mods = set(named.values())
    # a generation export's graphs name their own inputs (the decoder's input_ids): the name says the modality
    consumed = sorted({named.get(n) or modality_of(n) for n in reached} & mods)
    return {"graph_modalities": consumed, "silently_lost": sorted(mods - set(consumed))}


def main(model_type: str, class_name: str, work: Path) -> dict[str, Any]:
    row: dict[str, Any] = {"model_type": model_type, "class": class_name}
    folder, out = work / "model", work / "export" / "model.onnx"
    shutil.rmtree(work, ignore_errors=True)
    t0 = time.perf_counter()
    try:
        row.update(build(model_type, class_name, folder))
        row["built"] = True
    except Exception as exc:  # noqa: BLE001 - a config the shrinker cannot build is a row, not a crash
        row.update(built=False, build_error=f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
                   if str(exc).strip() else type(exc).__name__)
        return row
    row["build_s"] = round(time.perf_counter() - t0, 2)
    from studio.core.errors import StudioError
    from studio.export.api import ExportOptions, export_model

    t1 = time.perf_counter()
    try:
        report = export_model(ExportOptions(model_dir=folder, output=out, report=work / "report.json"))
    except StudioError as exc:  # bad input by the studio's own judgement: a located error, not a traceback
        row.update(status="input_error", diagnosis={"stage": "inputs", "error_class": type(exc).__name__,
                                                    "message": str(exc)[:400], "fix": exc.hint or "",
                                                    "module": exc.offending})
        return row
    except Exception:  # noqa: BLE001 - the count the table must keep at 0
        row.update(status="traceback", traceback=traceback.format_exc()[-3000:])
        return row
    row["export_s"] = round(time.perf_counter() - t1, 2)
    row["status"] = report.status
    row["signature"] = [f"{s.modality}:{s.name}" for s in report.signature]
    row["modalities"] = report.modalities
    row["parity"] = report.validation.passed
    row["static"] = report.example_inputs.get("static")
    row["processor"] = report.example_inputs.get("processor")
    row["origin"] = report.example_inputs.get("origin")
    row["exporter"] = report.options.get("exporter")
    gen = report.generation
    row["with_past"] = bool(gen is not None and gen.cache)
    row["generate"] = None if gen is None else gen.status
    d = report.diagnosis
    if d is not None:
        row["diagnosis"] = {"stage": d.stage, "error_class": d.error_class, "message": d.message[:400],
                            "module": d.module, "fix": d.fix[:300]}
    if report.status == "succeeded":
        row.update(independent_check(report))
    return row


if __name__ == "__main__":
    mt, cls, workdir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    result = main(mt, cls, workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    sys.stdout.flush()
    print("\n" + json.dumps(result, default=str))

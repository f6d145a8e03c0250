"""Stage "write": the tokenizer / processor / config files copied beside the model, everything renamed into
place (parts first, the model last), and the report closed. Until here nothing exists at the output path."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from studio.core.external_data import LARGE_BYTES, data_name, write_inline
from studio.export.contract import ExportOptions, ExportReport, OutputFile
from studio.export.signatures import WEIGHT_FILES
from studio.export.stages.run import ExportRun, fail

COMPANION_SKIP = {"studio_sample.json", "model.safetensors.index.json", "pytorch_model.bin.index.json"}


def copy_companions(model_dir: Path, tmp: Path, output: Path) -> list[tuple[Path, str]]:
    """Tokenizer, processor and config files (not weights) go next to the model: (copy in tmp, kind) each."""
    out: list[tuple[Path, str]] = []
    for f in sorted(model_dir.iterdir()):
        if not f.is_file() or f.suffix in WEIGHT_FILES or f.name in COMPANION_SKIP or f.name == output.name:
            continue
        if f.name.endswith(".index.json"):
            continue
        name = f.name
        kind = ("config" if name in ("config.json", "generation_config.json")
                else "processor" if ("processor" in name or "preprocessor" in name or "feature_extractor" in name)
                else "tokenizer")
        dest = tmp / "companions" / name
        dest.parent.mkdir(exist_ok=True)
        shutil.copy2(f, dest)
        out.append((dest, kind))
    return out


def write_outputs(run: ExportRun, written: list[tuple[Path, str, str | None]]) -> None:
    """Companions, then the parts, then the model renamed from the temp folder; ``report.outputs`` lists them."""
    from studio.export.contract import Diagnosis

    options, report = run.options, run.report
    try:
        companions = copy_companions(options.model_dir, run.tmp, options.output)
    except OSError as exc:
        fail(run, Diagnosis(stage="write", error_class="io_error", message=str(exc),
                            fix="check free space and permissions of the output folder"))
    run.job.check_cancelled()
    final_dir = options.output.parent
    outputs: list[OutputFile] = []
    for path, kind in companions:
        dest = final_dir / path.name
        os.replace(path, dest)
        outputs.append(OutputFile(str(dest), kind, None, dest.stat().st_size))
    for path, kind, modality in reversed(written):  # parts first, the model last; a data file before its graph
        dest = final_dir / path.name
        has_data = place_model(run, path, dest)
        outputs.insert(0, OutputFile(str(dest), kind, modality, dest.stat().st_size))
        if has_data:
            data = dest.with_name(data_name(dest))
            outputs.insert(1, OutputFile(str(data), "data", modality, data.stat().st_size))
        if kind == "part":
            for info in report.parts.values():
                if Path(info["path"]).name == path.name:
                    info["path"] = str(dest)
    if options.report is not None:
        outputs.append(OutputFile(str(options.report), "report"))
    report.outputs = outputs


def final_external(options: ExportOptions, data_bytes: int) -> bool:
    """The layout the user gets: --external-data / --no-external-data, else a data file past 1.8 GB."""
    return options.external_data if options.external_data is not None else data_bytes > LARGE_BYTES


def place_model(run: ExportRun, path: Path, dest: Path) -> bool:
    """Move the graph at ``path`` (and its data file) to ``dest`` in its final layout: the data file moved beside
    it, or folded into one file (streamed). A stale data file of the model replaced at ``dest`` is removed.
    Returns whether ``dest`` has a data file."""
    data, dest_data = path.with_name(data_name(path)), dest.with_name(data_name(dest))
    if data.exists() and final_external(run.options, data.stat().st_size):
        os.replace(data, dest_data)
        os.replace(path, dest)
        return True
    if data.exists():
        run.job.set_status(f"writing {dest.name} as one file ({data.stat().st_size / 1e6:.0f} MB of weights)")
        write_inline(path, dest, progress=lambda _n: run.job.check_cancelled())
        data.unlink()
    else:
        os.replace(path, dest)
    dest_data.unlink(missing_ok=True)  # the replaced model's weights: never left beside a one-file model
    return False


def close_report(report: ExportReport, options: ExportOptions, total_seconds: float) -> None:
    """Total time; a failed or cancelled export lists no outputs (none were left); saved unless cancelled."""
    report.timings["total"] = round(total_seconds, 4)
    if report.status != "succeeded":
        report.outputs = []
        report.parts = {k: {**v, "path": None} for k, v in report.parts.items()}
    if options.report is not None and report.status != "cancelled":
        report.save(options.report)

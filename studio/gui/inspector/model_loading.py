"""Which file the inspector opens, and the worker side of showing it: a path or export folder to its .onnx,
and the graph read without external weights (shape-inferred for the labels) as the view's plain arrays. A model
past 2 GB keeps its weights in data files: only the graph is parsed, whatever the size of the weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.core.errors import InputError
from studio.gui.graph.model import GraphData

translate = QCoreApplication.translate  # thread-safe: the loading job's errors are said in the studio's language


def resolve_model_file(path: Path | str) -> Path:
    """An .onnx file, or an export folder holding one (model.onnx first); InputError otherwise."""
    p = Path(path).expanduser()
    if p.is_dir():
        cands = [p / "model.onnx"] + sorted(p.glob("*.onnx")) + sorted(p.glob("onnx/*.onnx"))
        for c in cands:
            if c.is_file():
                return c
        raise InputError(translate("InspectPage", "no .onnx file in folder {path}").format(path=p), offending=str(p),
                         hint=translate("InspectPage", "choose the exported .onnx file, or export the model first"))
    if not p.is_file():
        raise InputError(translate("InspectPage", "model file not found: {path}").format(path=p), offending=str(p),
                         hint=translate("InspectPage", "check the path"))
    return p


def load_graph_job(path: Path, job: Any) -> GraphData:
    """Worker side: read the graph without external weights, infer shapes for the labels, build the view data."""
    import onnx

    from studio.gui.graph.model import graph_from_onnx

    job.set_status(translate("InspectPage", "reading {name}").format(name=path.name))
    job.set_progress(5, force=True)
    try:
        proto = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError, OSError, ...: all mean "not a readable model"
        said = translate("InspectPage", "cannot read {name} as an ONNX model: {error}").format(
            name=path.name, error=f"{type(exc).__name__}: {exc}")
        raise InputError(said[:400], offending=str(path),
                         hint=translate("InspectPage", "is the file complete and really an .onnx model?")) from exc
    from studio.core.external_data import check_data_files

    check_data_files(proto, path)  # weights in a data file are never read here, but one that is gone is named
    job.check_cancelled()
    job.set_status(translate("InspectPage", "inferring shapes for the graph labels"))
    job.set_progress(35, force=True)
    try:
        proto = onnx.shape_inference.infer_shapes(proto, strict_mode=False)
    except Exception as exc:  # labels then show only declared shapes; the report says why inference failed
        job.log(translate("InspectPage", "shape inference failed ({error}); showing declared shapes only").format(
            error=type(exc).__name__))
    job.check_cancelled()
    job.set_status(translate("InspectPage", "building the graph"))
    job.set_progress(70, force=True)
    graph = graph_from_onnx(proto)
    job.set_progress(100, force=True)
    return graph


__all__ = ["resolve_model_file", "load_graph_job"]

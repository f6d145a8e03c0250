"""Reading profiles for the inspector: profile keys to graph names, the sizes to profile dynamic inputs at, and
the profile saved in the workspace (only when it was taken of this very file).

Qt-free: ProfileReport in, plain values out; the page and the Profile tab render what these return.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def graph_names(rep: Any, graph: Any) -> dict[str, str]:
    """Profile node key -> graph node name. Both walk the main graph in order, but spell repeated names
    differently (``#i`` vs ``_i``), so the i-th op node of the graph is the i-th profiled node."""
    if graph is None:
        return {n.key: n.key for n in rep.nodes}
    ops = [n for n in graph.nodes if n.kind == "op"]
    out: dict[str, str] = {}
    for i, nt in enumerate(rep.nodes):
        if i < len(ops) and ops[i].op_type == nt.op_type:
            out[nt.key] = ops[i].name
        elif graph.index_of(nt.key) is not None:
            out[nt.key] = nt.key
    return out


def input_dims(stats_inputs: dict[str, Any]) -> list[tuple[str, str, int, int]]:
    """Dynamic dims of the graph inputs: (field label, input, axis, default) for each; named dims once."""
    from studio.gui.inspector.fixes import _DEFAULTS

    out: list[tuple[str, str, int, int]] = []
    seen: set[str] = set()
    for name, info in (stats_inputs or {}).items():
        for ax, d in enumerate(info.get("shape") or []):
            if isinstance(d, int) and d > 0:
                continue
            label = str(d) if isinstance(d, str) and d else f"{name}[{ax}]"
            if label in seen:
                continue
            seen.add(label)
            default = _DEFAULTS.get(label.lower(), 1 if ax == 0 else 8)
            out.append((label, name, ax, default))
    return out


def shapes_for(stats_inputs: dict[str, Any], values: dict[str, int]) -> dict[str, list[int]]:
    """Concrete input shapes from the declared ones and ``values`` for their dynamic dims (by label)."""
    shapes: dict[str, list[int]] = {}
    for name, info in (stats_inputs or {}).items():
        dims = info.get("shape")
        if dims is None:
            continue
        shape: list[int] = []
        for ax, d in enumerate(dims):
            if isinstance(d, int) and d > 0:
                shape.append(d)
                continue
            label = str(d) if isinstance(d, str) and d else f"{name}[{ax}]"
            if label not in values:
                break
            shape.append(int(values[label]))
        else:
            shapes[name] = shape
    return shapes


def load_saved(ws: Any, model: Path) -> tuple[Any, bool] | None:
    """The workspace's saved profile of ``model`` and whether the model changed after it was taken.

    Exports are all called model.onnx, so a profile whose recorded path is another file is not this one's.
    """
    from studio.core.errors import StudioError
    from studio.profiling.api import ProfileReport, workspace_profile_path

    if ws is None:
        return None
    path = workspace_profile_path(ws, model)
    if not path.is_file():
        return None
    try:
        rep = ProfileReport.load(path)
    except StudioError:
        return None
    recorded = Path(rep.model)
    if not recorded.is_absolute():
        recorded = Path(ws.root) / recorded if hasattr(ws, "root") else recorded
    try:
        same = recorded.resolve() == model.resolve()
    except OSError:
        same = False
    if not same:
        return None
    try:
        stale = model.stat().st_mtime > path.stat().st_mtime
    except OSError:
        stale = False
    return rep, stale


__all__ = ["graph_names", "input_dims", "shapes_for", "load_saved"]

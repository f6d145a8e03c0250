"""Which two files the Diff page compares by default, and what each one is, from the workspace state.

A fix's output is an entry of its own whose ``fix_source`` artifact names the model it was made from: that
original is A (before) and the output B (after), whichever of the two is current, so a diff reads forwards
("449 removed" by the fix, never "449 added"). Without a fix, A is the current model and B empty. No widgets:
the descriptions are said in the studio's language with QCoreApplication.translate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QCoreApplication

from studio.core.state import StudioState

translate = QCoreApplication.translate


@dataclass
class Side:
    path: str  # "" when the state suggests nothing
    why: str  # what the file is: "the original the static fix was made from", "the current model", ...


def _onnx_of(state: StudioState, name: str | None = None) -> str:
    """A model entry's ONNX file (its export's ``onnx`` artifact, or the entry's own .onnx path)."""
    onnx = state.artifact("onnx", name)
    path = onnx or state.model_path(name)
    return str(path) if path is not None and str(path).endswith(".onnx") else ""


def _kind(source: str) -> str:
    """``static fix`` from an entry's source line (``static fix of /w/model.onnx``, written by the fix flow)."""
    return source.split(" of ", 1)[0] if " fix of " in source else "fix"


def _same(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


def default_sides(state: StudioState) -> tuple[Side, Side]:
    """(A, B) for the current model: the fix's source and the fix when the current model is (or has) a fix."""
    cur = state.model()
    if cur is None or state.workspace is None:
        return Side("", ""), Side("", "")
    here = _onnx_of(state)
    source = state.artifact("fix_source")
    if source:  # the current model is a fix's output
        return (Side(str(source), translate("DiffPage", "before: the original the {fix} was made from").format(
            fix=_kind(cur.source))),
                Side(here, translate("DiffPage", "after: the {fix} output (current model {name})").format(
                    fix=_kind(cur.source), name=cur.name)))
    fixes = [m for m in state.workspace.models
             if (src := state.artifact("fix_source", m.name)) and here and _same(str(src), here)]
    if fixes:  # the current model has been fixed: its newest fix is B
        fix = fixes[-1]
        return (Side(here, translate("DiffPage", "before: the current model {name}").format(name=cur.name)),
                Side(_onnx_of(state, fix.name), translate("DiffPage", "after: its {fix} ({name})").format(
                    fix=_kind(fix.source), name=fix.name)))
    return (Side(here, translate("DiffPage", "the current model {name}").format(name=cur.name) if here else ""),
            Side("", ""))


__all__ = ["Side", "default_sides"]

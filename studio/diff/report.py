"""The model diff as data: one DiffReport that text, JSON, HTML and the GUI's diff view render from.

Node keys are the inspector's (``studio.inspect.api.load_structure``: subgraph path + node name, ``Op_index``
for unnamed nodes), so a change can be looked up in either model's graph view or InspectionReport.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from studio.core.catalogue import N_
from studio.core.reports import Report

SCHEMA_VERSION = 1
ADDED, REMOVED, CHANGED = "added", "removed", "changed"
# what a changed node or tensor can differ in
KINDS = ("op_type", "domain", "attribute", "inputs", "outputs", "shape", "dtype", "verdict")
# a node changed in these kinds only did the same thing on differently shaped tensors (a static-dims fix
# re-shapes every node downstream of a batch dim): told apart from nodes whose op, attributes or wiring changed
SHAPE_ONLY_KINDS = frozenset({"shape"})


@dataclass
class FieldChange:
    """One difference of a matched node: ``kind`` (see KINDS), ``what`` names the attribute, tensor or slot."""

    kind: str
    what: str
    a: Any = None
    b: Any = None


@dataclass
class NodeChange:
    """An added (only ``b``), removed (only ``a``) or changed (both) node, named by its key in each model."""

    status: str  # "added" | "removed" | "changed"
    a: str | None = None
    b: str | None = None
    op_a: str = ""
    op_b: str = ""
    matched_by: str = ""  # "name" | "tensor" | "neighbours" | "signature"; "" when not matched
    changes: list[FieldChange] = field(default_factory=list)
    verdict_a: str | None = None  # with a target
    verdict_b: str | None = None

    @property
    def kinds(self) -> list[str]:
        return list(dict.fromkeys(c.kind for c in self.changes))

    @property
    def shape_only(self) -> bool:
        """A changed node whose only differences are its tensors' shapes (SHAPE_ONLY_KINDS)."""
        return self.status == CHANGED and bool(self.changes) and set(self.kinds) <= SHAPE_ONLY_KINDS


@dataclass
class TensorChange:
    """A graph input, graph output or initializer that was added, removed or changed (dtype / shape only)."""

    section: str  # "input" | "output" | "initializer"
    name: str
    status: str
    dtype_a: str | None = None
    dtype_b: str | None = None
    shape_a: list[Any] | None = None
    shape_b: list[Any] | None = None


@dataclass
class DiffSummary:
    nodes_a: int = 0
    nodes_b: int = 0
    matched: int = 0
    matched_by_name: int = 0
    matched_by_structure: int = 0
    matched_by: dict[str, int] = field(default_factory=dict)  # method -> pairs
    unchanged: int = 0
    added: int = 0
    removed: int = 0
    changed: int = 0
    changed_shape_only: int = 0  # of ``changed``: nodes whose only change is their tensors' shapes
    changed_by_kind: dict[str, int] = field(default_factory=dict)  # kind -> changed nodes with that kind
    inputs: dict[str, int] = field(default_factory=dict)  # status -> graph inputs
    outputs: dict[str, int] = field(default_factory=dict)
    initializers: dict[str, int] = field(default_factory=dict)
    unrelated: bool = False  # nothing (or next to nothing) matched
    message: str = ""


@dataclass
class DiffReport(Report):
    schema_version: int = SCHEMA_VERSION
    model_a: str = ""
    model_b: str = ""
    target: str | None = None
    summary: DiffSummary = field(default_factory=DiffSummary)
    nodes: list[NodeChange] = field(default_factory=list)  # changed, then removed, then added; graph order
    tensors: list[TensorChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. shape inference failed on one side
    timings: dict[str, float] = field(default_factory=dict)
    _pairs: list[tuple[str, str, str]] = field(default_factory=list, repr=False)  # (key A, key B, method), all

    @property
    def has_changes(self) -> bool:
        return bool(self.nodes or self.tensors)

    def pairs(self) -> list[tuple[str, str, str]]:
        """Every matched pair, changed or not (key in A, key in B, method): what a linked view needs."""
        return self._pairs

    def changes_of(self, status: str) -> list[NodeChange]:
        return [n for n in self.nodes if n.status == status]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DiffReport:
        d = dict(data)
        d["summary"] = DiffSummary(**d.get("summary", {}))
        d["nodes"] = [NodeChange(**{**n, "changes": [FieldChange(**c) for c in n.get("changes", [])]})
                      for n in d.get("nodes", [])]
        d["tensors"] = [TensorChange(**t) for t in d.get("tensors", [])]
        known = {k for k in cls.__dataclass_fields__ if not k.startswith("_")}
        return cls(**{k: v for k, v in d.items() if k in known})


def _english(template: str, /, **values: object) -> str:
    return template.format(**values)


def summary_message(s: DiffSummary, has_changes: bool, say: Callable[..., str] = _english) -> str:
    """The diff's one-line summary (``DiffSummary.message``): English for the report (``say`` formats the
    template), the user's language in the text report (``say=studio.core.catalogue.tr``)."""
    most = max(s.nodes_a, s.nodes_b)
    if s.unrelated:
        return say(N_("nothing matched: the models share no node names and no structure ({matched} of {most} nodes "
                      "matched)"), matched=s.matched, most=most)
    how = say(N_("{matched} of {most} nodes matched ({by_name} by name, {by_structure} by structure)"),
              matched=s.matched, most=most, by_name=s.matched_by_name, by_structure=s.matched_by_structure)
    if not has_changes:
        return say(N_("no changes: {how}"), how=how)
    bits = [say(template, count=sum(d.values())) for template, d in (
        (N_("{count} graph inputs"), s.inputs), (N_("{count} graph outputs"), s.outputs),
        (N_("{count} initializers"), s.initializers)) if d]
    split = say(N_(" ({wiring} in op, attributes or wiring, {shapes} in shapes only)"),
                wiring=s.changed - s.changed_shape_only, shapes=s.changed_shape_only) if s.changed_shape_only else ""
    return (say(N_("{changed} changed{split}, {added} added, {removed} removed; {how}"), changed=s.changed,
                split=split, added=s.added, removed=s.removed, how=how)
            + (say(N_("; changed {tensors}"), tensors=", ".join(bits)) if bits else ""))

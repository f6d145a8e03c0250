"""What a vendor toolchain does to a whole graph before it places the nodes, as the profile's ``graph:`` says.

Node rules checked one node at a time miss what the vendor does to the graph first: rknn-toolkit2 fixes the
input shapes, folds every constant subgraph and all shape arithmetic (``fold_constant``), and then runs integer
and boolean work and lookups by a runtime index on the CPU. So an ``Expand`` whose shape comes from
``Shape -> Gather -> Concat`` is not a const-input violation (the shape is a constant by then), and a ``Cast``
of the attention mask is a host node, not an NPU one. ``place`` answers, per node, what the toolchain does:
folded (nothing left to run), on the host (with the rule and its reason) or on the accelerator although the op
list says host (a fused pattern, constant weights). Every rule comes from the profile, with its source; the
words of each placement are a template (``N_``) around the profile's sentence as its ``{reason}``, so the
catalogue translates both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.catalogue import N_
from studio.inspect.dynamic import DynamicReport
from studio.inspect.model import LoadedModel, NodeRef, dtype_name
from studio.inspect.profiles import Accelerated, GraphRules, TargetProfile

NON_FOLDABLE = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                "Bernoulli", "If", "Loop", "Scan"}


@dataclass
class Placement:
    """One target's view of the whole graph: the tensors known at build, and where each node goes."""

    constants: set[str]  # tensor names the toolchain knows at build (the const-input checks read this)
    folded: set[str] = field(default_factory=set)  # node keys folded into constants
    host: dict[str, str] = field(default_factory=dict)  # node key -> the finding's words: "runs on the host: ..."
    accelerated: dict[str, str] = field(default_factory=dict)  # node key -> why a host-listed op stays on the device
    removed: dict[str, str] = field(default_factory=dict)  # node key -> why the toolchain drops it (no-op)
    source: str = ""
    data_dependent: set[str] = field(default_factory=set)  # node keys whose shape needs run-time values

    @property
    def special(self) -> set[str]:
        """Node keys whose verdict differs from their op's list entry."""
        return self.folded | set(self.host) | set(self.accelerated) | set(self.removed)

    @property
    def gone(self) -> set[str]:
        """Node keys that run nowhere (folded or removed)."""
        return self.folded | set(self.removed)


@dataclass
class Folding:
    """What a build knows before it places anything: tensors with known values, folded nodes, and the nodes
    whose output shape still depends on values computed at run time (data-dependent at this build)."""

    constants: set[str]
    folded: set[str]
    data_dependent: set[str]


def build_constants(lm: LoadedModel, dyn: DynamicReport, rules: GraphRules) -> Folding:
    """Constant subgraphs fold; with ``fold: build_shapes`` also Shape / Size of every tensor whose shape does
    not depend on run-time values (the inputs are fixed at build), so shape arithmetic is a constant and only
    a shape given by computed values (a Range over an input's values, NonZero) is data-dependent."""
    from studio.inspect.dynamic import ALWAYS_DATA_DEPENDENT, SHAPE_INPUTS

    consts = set(lm.constants)
    had_empty = "" in consts
    consts.add("")
    folded: set[str] = set()
    shapes = rules.fold == "build_shapes"
    if not shapes:
        out = Folding(consts, folded, set(dyn.data_dependent_nodes))
    else:
        out = Folding(consts, folded, set())
    by_values: set[str] = set()  # tensors whose shape depends on run-time values
    for ref in lm.nodes:
        op, ins = ref.op_type, ref.inputs
        if op in NON_FOLDABLE or ref.graph:
            continue
        if op == "Constant" or (ins and consts.issuperset(ins)) or (
                shapes and op in ("Shape", "Size") and ins and ins[0] not in by_values):
            consts.update(o for o in ref.outputs if o)
            if op != "Constant":
                folded.add(ref.key)
            continue
        if not shapes:
            continue
        given = SHAPE_INPUTS.get(op, ())
        if op in ALWAYS_DATA_DEPENDENT or any(i < len(ins) and ins[i] and ins[i] not in consts for i in given):
            out.data_dependent.add(ref.key)
            by_values.update(o for o in ref.outputs if o)
        elif any(i in by_values for i in ins):
            by_values.update(o for o in ref.outputs if o)
    if not had_empty:
        consts.discard("")
    return out


def _elem(lm: LoadedModel, name: str) -> str:
    t = lm.tensors.get(name)
    return dtype_name(t.elem_type) if t is not None and t.elem_type else ""


def _made(ref: NodeRef, lm: LoadedModel, output: str) -> str:
    """The element type a node makes: a Cast's ``to`` (what it is asked for), else the output's inferred type."""
    if ref.op_type == "Cast":
        to = next((a.i for a in ref.node.attribute if a.name == "to"), None)
        return dtype_name(to) if to else ""
    return _elem(lm, output)


def _cast_to_itself(ref: NodeRef, lm: LoadedModel) -> bool:
    """A Cast whose ``to`` is its input's element type."""
    t = lm.tensors.get(ref.inputs[0]) if ref.inputs else None
    to = next((a.i for a in ref.node.attribute if a.name == "to"), None)
    return t is not None and bool(t.elem_type) and to == t.elem_type


def _moves_data(ref: NodeRef, rules: GraphRules) -> bool:
    return ref.op_type in rules.moves_data


def _accelerated(rule: Accelerated, ref: NodeRef, lm: LoadedModel, consts: set[str]) -> bool:
    ins = ref.inputs
    if rule.const_inputs and not all(i < len(ins) and ins[i] in consts for i in rule.const_inputs):
        return False
    if rule.dtypes and (not ins or _elem(lm, ins[0]) not in rule.dtypes
                        or any(_made(ref, lm, o) not in rule.dtypes for o in ref.outputs if o)):
        return False  # input 0 and every output of one of these element types
    if rule.after:
        prod = lm.producers.get(ins[0]) if ins else None
        if prod is None or prod.op_type != rule.after:
            return False
    if rule.before:
        readers = [c for o in ref.outputs if o for c in lm.consumers.get(o, [])]
        if not any(c.op_type == rule.before for c in readers):
            return False
    return bool(rule.const_inputs or rule.after or rule.before or rule.dtypes)


def _zero_operands(lm: LoadedModel, rules: GraphRules, consts: set[str], folded: set[str],
                   fixed: LoadedModel | None) -> dict[str, str]:
    """Node key -> why, for the nodes ``zero_operand`` makes no-ops: an operand that is all zeros at build (an
    ``arange(batch) * seq`` at batch 1 added to an index). The values are computed only when a node could be one."""
    cands = [r for r in lm.nodes if not r.graph and r.key not in folded and r.op_type in rules.zero_operand
             and any(i < len(r.inputs) and r.inputs[i] in consts for i in rules.zero_operand[r.op_type])]
    if not cands:
        return {}
    from studio.inspect.build_values import refined

    _fixed, values = refined(fixed, lm, consts)
    out: dict[str, str] = {}
    for r in cands:
        for i in rules.zero_operand[r.op_type]:
            v = values.get(r.inputs[i]) if i < len(r.inputs) else None
            if v is not None and v[1] and not any(v[1]):
                reason = rules.zero_operand_reason
                out[r.key] = N_(f"input {i} is all zeros at build: {reason}")
                break
    return out


def place(lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile,
          fixed: LoadedModel | None = None) -> Placement | None:
    """Where the toolchain puts each main-graph node of ``lm``; None when the profile has no ``graph:``.
    ``fixed``: the model at the build's static shapes, when given (the values shape arithmetic folds to)."""
    rules = prof.graph
    if rules is None:
        return None
    fold = build_constants(lm, dyn, rules)
    consts, folded = fold.constants, fold.folded
    out = Placement(constants=consts, folded=folded, source=rules.source, data_dependent=fold.data_dependent)
    host_types = set(rules.host_dtypes)
    if rules.zero_operand and fixed is not None:
        out.removed.update(_zero_operands(lm, rules, consts, folded, fixed))
    for ref in lm.nodes:
        if ref.graph or ref.key in folded or ref.key in out.removed or ref.op_type == "Constant":
            continue
        op, ins = ref.op_type, ref.inputs
        if op == "Cast" and _cast_to_itself(ref, lm):
            out.removed[ref.key] = N_("a Cast to its own element type does nothing: the build removes it")
            continue
        index = rules.runtime_index.get(op)
        if index and any(i < len(ins) and ins[i] and ins[i] not in consts for i in index):
            reason = rules.runtime_index_reason
            out.host[ref.key] = N_(f"runs on the host: {op} by an index computed at run time: {reason}")
            continue
        if host_types and not _moves_data(ref, rules):
            made = sorted({_made(ref, lm, o) for o in ref.outputs if o} & host_types)
            if made:
                types, reason = "/".join(made), rules.host_dtypes_reason
                out.host[ref.key] = N_(f"runs on the host: computes {types} values: {reason}")
                continue
        acc = rules.accelerated.get(op)
        listed = prof.lookup(ref.domain, op)
        if acc is not None and listed is not None and listed.status == "cpu" and _accelerated(acc, ref, lm, consts):
            out.accelerated[ref.key] = acc.reason
    return out


def placements_summary(p: Placement | None) -> dict[str, Any]:
    """Counts for reports and benchmarks."""
    if p is None:
        return {}
    return {"folded": len(p.folded), "removed": len(p.removed), "host": len(p.host),
            "accelerated": len(p.accelerated), "source": p.source}

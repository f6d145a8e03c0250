"""A target's model-wide rules (opset range, dynamic input dims, INT64 and DOUBLE tensors) as findings.

Each message is a template (``N_``) around the profile's sentence as its ``{why}``: the catalogue translates the
frame, and the sentence through its own entry (every shipped profile's is there: message_extract.profile_sentences);
a user's profile's sentence stays as written inside the translated frame."""

from __future__ import annotations

from studio.core.catalogue import N_
from studio.inspect.dynamic import DynamicReport
from studio.inspect.model import LoadedModel
from studio.inspect.profiles import TargetProfile
from studio.inspect.report import SEVERITY_OF, Finding


def _inner_by_elem(lm: LoadedModel) -> dict[int, int]:
    """Element type -> number of tensors that are not constants; every target's dtype rule reads it."""
    table = lm.cache.get("inner-by-elem")
    if table is None:
        from collections import Counter

        consts = lm.constants
        table = lm.cache["inner-by-elem"] = dict(Counter(t.elem_type for name, t in lm.tensors.items()
                                                         if name not in consts))
    return table


def global_findings(lm: LoadedModel, dyn: DynamicReport, prof: TargetProfile) -> list[Finding]:
    out: list[Finding] = []
    r = prof.rules
    if prof.kind == "none":
        return out
    # opset range of the default domain
    opset = lm.opsets.get("ai.onnx")
    if opset is not None and ((r.opset_min is not None and opset < r.opset_min)
                              or (r.opset_max is not None and opset > r.opset_max)):
        rng = f"{r.opset_min if r.opset_min is not None else '?'}-{r.opset_max if r.opset_max is not None else '?'}"
        name, why = prof.name, r.opset_reason  # the frame translated; {why} through the sentence's own entry
        out.append(Finding(target=prof.id, severity=SEVERITY_OF[r.opset_verdict], verdict=r.opset_verdict,
                           rule="opset", message=N_(f"model opset {opset} outside {name}'s range {rng}: {why}") if why
                           else N_(f"model opset {opset} outside {name}'s range {rng}"),
                           hint=N_(f"re-export with an opset in {rng} (studio export --opset N)")))
    # dynamic shapes
    if r.dynamic_shapes != "allowed":
        for o in dyn.origins:
            if o.kind == "input":
                sev = r.dynamic_shapes
                # the core's words around the profile's own sentence: {reason} and {why} are translated inside
                # the message where the catalogue has them (a shipped profile's sentence has its entry; a user's
                # stays as written)
                reason = o.description
                why = r.dynamic_reason or N_(f"{prof.name} needs static shapes")
                out.append(Finding(target=prof.id, severity=SEVERITY_OF[sev], verdict=sev, rule="dynamic-shape",
                                   message=N_(f"{reason}; {why} (reaches {o.reaches} tensors)"), tensor=o.tensor,
                                   hint=N_(f"fix it: studio fix MODEL --static {o.symbol or o.tensor}=N")
                                   if o.symbol else N_("give the input a fixed shape (studio fix --static)")))
    # INT64 / DOUBLE tensors at the graph boundary and inside
    for key, elem, level, why in (("int64", 7, r.int64, r.int64_reason), ("double", 11, r.double, r.double_reason)):
        if level == "allowed":
            continue
        io = [n for n in lm.graph_inputs + lm.graph_outputs if lm.tensors.get(n) and lm.tensors[n].elem_type == elem]
        inner = _inner_by_elem(lm).get(elem, 0)
        if io or inner:
            name = prof.name
            why = why or (N_(f"{name} handles int64 poorly") if key == "int64" else N_(f"{name} handles double poorly"))
            if key == "int64":
                message = N_(f"INT64 graph inputs/outputs {io}: {why}") if io else \
                    N_(f"INT64 {inner} internal tensors: {why}")
            else:
                message = N_(f"DOUBLE graph inputs/outputs {io}: {why}") if io else \
                    N_(f"DOUBLE {inner} internal tensors: {why}")
            out.append(Finding(target=prof.id, severity=SEVERITY_OF[level], verdict=level, rule=f"dtype-{key}",
                               message=message,
                               tensor=io[0] if io else None,
                               hint=N_("cast to int32/float32 at the boundary") if key == "int64"
                               else N_("convert the model to float32")))
    return out

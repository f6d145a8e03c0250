"""The schema of a target profile (studio/resources/targets/*.yaml or a user's own file), as a pydantic model,
and the TargetProfile built from a validated one.

Imported only when a profile is read from its YAML (a cache miss: ``profile_cache``); the analysis works on
the plain dataclasses of ``studio.inspect.profiles``. `studio schema targets` prints this model's JSON Schema.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    PlainValidator,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    model_validator,
)

from studio.core.errors import TargetError
from studio.core.resource_schema import ResourceModel, resource_error, validate
from studio.inspect.profiles import (
    DEFAULT_DOMAIN,
    PROFILE_SCHEMA,
    Accelerated,
    Constraint,
    GlobalRules,
    GraphRules,
    OpRule,
    ShapeValueRule,
    TargetProfile,
    norm_domain,
)

WHAT = "target profile"
HINT = ("see docs/guide/inspect.md (Target profiles) for the profile format, or compare with "
        "studio/resources/targets/tensorrt.yaml (`studio schema targets` prints the JSON Schema to check it with)")

Name = Annotated[StrictStr, Field(min_length=1)]
Text = Annotated[str, BeforeValidator(str)]  # free text; a number is taken as its text (version: 2.1)
Level = Literal["allowed", "risky", "unsupported"]
Verdict = Literal["unsupported", "risky"]


def _opset_range(v: Any) -> tuple[int | None, int | None]:
    if isinstance(v, int):
        return v, None
    if isinstance(v, list) and len(v) == 2 and all(x is None or isinstance(x, int) for x in v):
        return v[0], v[1]
    raise ValueError("an opset range is [min, max] (either may be null) or a single minimum")


_INT_OR_NULL = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
OpsetRange = Annotated[tuple[int | None, int | None], PlainValidator(_opset_range), WithJsonSchema({
    "anyOf": [{"type": "integer", "description": "the lowest version"},
              {"type": "array", "prefixItems": [_INT_OR_NULL, _INT_OR_NULL], "minItems": 2, "maxItems": 2,
               "description": "[min, max], either may be null"}]})]


def _iso_date(v: Any) -> Any:
    return v.isoformat() if isinstance(v, (_dt.date, _dt.datetime)) else v


class Rules(ResourceModel):
    """Model-wide rules: dynamic dims, data-dependent shapes, int64 / double tensors, the model opset range."""

    dynamic_shapes: Level | None = None
    dynamic_reason: Text | None = None
    data_dependent: Level | None = Field(None, description="ops with data-dependent output shapes (NonZero, ...)")
    data_dependent_reason: Text | None = None
    int64: Level | None = None
    int64_reason: Text | None = None
    double: Level | None = None
    double_reason: Text | None = None
    opset: OpsetRange | None = None
    opset_verdict: Verdict | None = Field(None, description="the verdict for a model opset outside `opset`")
    opset_reason: Text = ""


class _Constraint(ResourceModel):
    reason: Name = Field(description="why: shown with every node that breaks the rule")
    verdict: Verdict = Field("unsupported", description="what a node that breaks the rule gets")


class ConstInput(_Constraint):
    """The inputs at these indices must be constants (initializers)."""

    kind: Literal["const_input"]
    inputs: Annotated[list[StrictInt], Field(min_length=1)]


class AttrConstraint(_Constraint):
    """An attribute's value: one of ``allowed``, none of ``forbidden``, at most ``max_value``."""

    kind: Literal["attr"]
    name: StrictStr = Field(description="the attribute")
    allowed: list[Any] | None = None
    forbidden: list[Any] | None = None
    default: Any = Field(None, description="its value when the node does not set it")
    max_value: float | None = None

    @model_validator(mode="after")
    def _one_rule(self) -> AttrConstraint:
        if not {"allowed", "forbidden", "max_value"} & self.model_fields_set:
            raise ValueError("an attr constraint needs allowed, forbidden or max_value")
        return self


class Batch1(_Constraint):
    """The first input's batch dim must be 1."""

    kind: Literal["batch1"]


class DtypeConstraint(_Constraint):
    """The inputs at these indices (default: the first) must have one of the ``allowed`` element types."""

    kind: Literal["dtype"]
    inputs: list[StrictInt] = Field(default_factory=lambda: [0])
    allowed: list[StrictStr]


class MaxRank(_Constraint):
    """The first input's rank is at most ``value``."""

    kind: Literal["max_rank"]
    value: StrictInt


class StaticShape(_Constraint):
    """Every input and output of the node has static dims."""

    kind: Literal["static_shape"]


class SameDtype(_Constraint):
    """These inputs (and the dtype attribute ``name``, if given) have one element type."""

    kind: Literal["same_dtype"]
    inputs: list[StrictInt] = Field(default_factory=list)
    name: StrictStr | None = None

    @model_validator(mode="after")
    def _two_things(self) -> SameDtype:
        if len(self.inputs) + ("name" in self.model_fields_set) < 2:
            raise ValueError("same_dtype compares two or more inputs (or inputs and the dtype attribute 'name')")
        return self


class NonEmpty(_Constraint):
    """The inputs at these indices are not empty tensors (a shape vector of length 0: a scalar result)."""

    kind: Literal["nonempty"]
    inputs: list[StrictInt] = Field(default_factory=lambda: [0])


ConstraintSpec = Annotated[ConstInput | AttrConstraint | Batch1 | DtypeConstraint | MaxRank | StaticShape
                           | SameDtype | NonEmpty, Field(discriminator="kind")]


class ShapeValues(ResourceModel):
    """The importer keeps Shape outputs as shape values, which only the ``accepts`` ops take."""

    accepts: list[StrictStr]
    source: Name = Field(description="where the importer's behaviour was read")


class AcceleratedOp(ResourceModel):
    """An op the lists put on the host that runs on the accelerator in a whole graph, under a condition."""

    reason: Name
    const_inputs: list[StrictInt] = Field(default_factory=list, description="these inputs constant at build")
    after: StrictStr = Field("", description="the op producing its input 0 (a fused pattern)")
    before: StrictStr = Field("", description="an op reading its output (a fused pattern)")
    dtypes: list[StrictStr] = Field(default_factory=list, description="element types of the pattern")


class Graph(ResourceModel):
    """What the toolchain does to the whole graph before it places the nodes."""

    source: Name = Field(description="where these rules were read: toolkit version, verifier runs, document")
    fold: Literal["constants", "build_shapes"] = Field(
        "constants", description="constants: constant subgraphs fold; build_shapes: also shape arithmetic, the "
                                 "input shapes being fixed at build")
    fold_reason: Text = ""
    host_dtypes: list[StrictStr] = Field(default_factory=list,
                                         description="a node computing outputs of these element types runs on "
                                                     "the host")
    host_dtypes_reason: Text = ""
    moves_data: list[StrictStr] = Field(default_factory=list, description="layout ops exempt from host_dtypes")
    runtime_index: dict[str, list[StrictInt]] = Field(
        default_factory=dict, description="op -> index inputs: an index computed at run time puts it on the host")
    runtime_index_reason: Text = ""
    accelerated: dict[str, AcceleratedOp] = Field(default_factory=dict)
    zero_operand: dict[str, list[StrictInt]] = Field(
        default_factory=dict, description="op -> inputs: one that is all zeros at build makes the node a no-op "
                                          "the toolchain removes")
    zero_operand_reason: Text = ""


OpLists = dict[str, list[StrictStr]]


class TargetFile(ResourceModel):
    """A target profile: what an accelerator accepts (op lists per domain, constraints, model-wide rules).

    Op keys outside the lists are ``OP`` in the default domain or ``DOMAIN:OP``."""

    schema_: Literal[1] = Field(PROFILE_SCHEMA, alias="schema")
    id: Name
    name: Name
    source: Name = Field(description="the vendor document or tool the lists were read from")
    date_read: Annotated[Name, BeforeValidator(_iso_date)] = Field(description="when (YYYY-MM-DD)")
    version: Text = ""
    notes: Text = ""
    kind: Literal["list", "runtime", "none"] = Field(
        "list", description="list: a vendor list; runtime: computed from the runtime; none: no public list")
    unlisted: Literal["unsupported", "unknown", "risky"] | None = Field(
        None, description="the verdict for ops no list mentions (default: unknown for kind none, else unsupported)")
    rules: Rules | None = None
    supported: OpLists | None = Field(None, description="domain -> op names")
    unsupported: OpLists | None = Field(None, description="domain -> op names")
    unknown: OpLists | None = Field(None, description="domain -> op names")
    cpu_fallback: dict[str, StrictStr] | None = Field(None, description="op -> why it falls back to the CPU")
    risky: dict[str, Name] | None = Field(None, description="op -> why it is risky")
    opsets: dict[str, OpsetRange] | None = Field(None, description="op -> the op versions implemented")
    constraints: dict[str, list[ConstraintSpec]] | None = Field(None, description="op -> its constraints")
    shape_values: ShapeValues | None = None
    graph: Graph | None = None


def parse(data: Any, path: Path | str, text: str | None = None) -> TargetProfile:
    """Validate one profile mapping (``text``: its YAML, for line numbers in errors) and build the profile."""
    f = validate(TargetFile, data, path=path, text=text, error_cls=TargetError, what=WHAT, hint=HINT)
    return build(f, path, text)


def _no_list(path: Path | str, text: str | None, loc: tuple[str, ...], what: str) -> TargetError:
    err = resource_error(TargetError, WHAT, path, loc, f"{what} given for an op no list mentions", text=text,
                         hint=HINT)
    assert isinstance(err, TargetError)
    return err


def build(f: TargetFile, path: Path | str, text: str | None = None) -> TargetProfile:
    """The analysis' TargetProfile from a validated file (op keys resolved to domains, constraints attached)."""
    rules = GlobalRules()
    r = f.rules or Rules()
    for key, why in (("dynamic_shapes", "dynamic_reason"), ("data_dependent", "data_dependent_reason"),
                     ("int64", "int64_reason"), ("double", "double_reason")):
        if getattr(r, key) is not None:
            setattr(rules, key, getattr(r, key))
        if getattr(r, why) is not None:
            setattr(rules, why, getattr(r, why))
    if r.opset is not None:
        rules.opset_min, rules.opset_max = r.opset
    if r.opset_verdict is not None:
        rules.opset_verdict = r.opset_verdict
    rules.opset_reason = r.opset_reason
    unlisted = f.unlisted or ("unknown" if f.kind == "none" else "unsupported")
    prof = TargetProfile(id=f.id, name=f.name, source=f.source, date_read=f.date_read, kind=f.kind,
                         version=f.version, notes=f.notes, unlisted=unlisted, rules=rules, path=str(path))

    def put(domain: str, op: str, status: str, reason: str = "") -> None:
        d = prof.ops.setdefault(norm_domain(domain), {})
        rule = d.get(op)
        if rule is None:
            d[op] = OpRule(status=status, reason=reason)
        else:
            rule.status, rule.reason = status, reason or rule.reason

    for lists, status in ((f.supported, "supported"), (f.unsupported, "unsupported"), (f.unknown, "unknown")):
        for domain, ops in (lists or {}).items():
            for op in ops:
                put(domain, op, status)
    for table, status in ((f.cpu_fallback, "cpu"), (f.risky, "risky")):
        for op_key, reason in (table or {}).items():
            put(*split_key(op_key), status, reason)
    for op_key, (since, until) in (f.opsets or {}).items():
        rule = prof.lookup(*split_key(op_key))
        if rule is None:
            raise _no_list(path, text, ("opsets", op_key), "opset range")
        rule.since, rule.until = since, until
    for op_key, items in (f.constraints or {}).items():
        rule = prof.lookup(*split_key(op_key))
        if rule is None:
            raise _no_list(path, text, ("constraints", op_key), "constraints")
        rule.constraints = [Constraint(kind=c.kind, reason=c.reason, verdict=c.verdict,
                                       inputs=list(getattr(c, "inputs", [])), name=getattr(c, "name", None),
                                       allowed=getattr(c, "allowed", None), forbidden=getattr(c, "forbidden", None),
                                       default=getattr(c, "default", None), max_value=getattr(c, "max_value", None),
                                       value=getattr(c, "value", None)) for c in items]
    if f.shape_values is not None:
        prof.shape_values = ShapeValueRule(list(f.shape_values.accepts), f.shape_values.source)
    if f.graph is not None:
        g = f.graph
        prof.graph = GraphRules(
            source=g.source, fold=g.fold, fold_reason=g.fold_reason, host_dtypes=list(g.host_dtypes),
            host_dtypes_reason=g.host_dtypes_reason, moves_data=list(g.moves_data),
            runtime_index={k: list(v) for k, v in g.runtime_index.items()},
            runtime_index_reason=g.runtime_index_reason,
            accelerated={k: Accelerated(reason=a.reason, const_inputs=list(a.const_inputs), after=a.after,
                                        before=a.before, dtypes=list(a.dtypes)) for k, a in g.accelerated.items()},
            zero_operand={k: list(v) for k, v in g.zero_operand.items()}, zero_operand_reason=g.zero_operand_reason)
    rules.domains = sorted(prof.ops) or [DEFAULT_DOMAIN]
    return prof


def split_key(key: str) -> tuple[str, str]:
    """``"com.microsoft:Gelu"`` -> (com.microsoft, Gelu); a bare name is in the default domain."""
    if ":" in key:
        d, op = key.rsplit(":", 1)
        return d, op
    return DEFAULT_DOMAIN, key

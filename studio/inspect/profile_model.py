"""What a target profile is, as data: the dataclasses and constants every profile reader and checker shares.

Apart from ``profiles`` (which finds, loads and caches the files) so that the schema (``profile_schema``), the
cache (``profile_cache``) and the computed ONNX Runtime profile (``ort_profile``) import the data model without
importing the loader that imports them: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PROFILE_SCHEMA = 1
DEFAULT_DOMAIN = "ai.onnx"
OP_STATUSES = ("supported", "risky", "unsupported", "unknown", "cpu")
RULE_LEVELS = ("allowed", "risky", "unsupported")  # the schema (profile_schema.py) holds the same literals
CONSTRAINT_KINDS = ("const_input", "attr", "batch1", "dtype", "max_rank", "static_shape", "same_dtype", "nonempty")
BUILTIN_IDS = ("tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax", "ort-cpu",
               "hailo-8", "mlu370")


def norm_domain(domain: str | None) -> str:
    return DEFAULT_DOMAIN if domain in (None, "", "ai.onnx") else str(domain)


@dataclass
class Constraint:
    """One per-op rule; ``verdict`` is what a node gets when it breaks the rule."""

    kind: str  # const_input | attr | batch1 | dtype | max_rank | static_shape | same_dtype | nonempty
    reason: str
    verdict: str = "unsupported"  # "unsupported" | "risky"
    inputs: list[int] = field(default_factory=list)  # const_input / dtype: input indices (dtype default [0])
    name: str | None = None  # attr: attribute name; same_dtype: an attribute holding a dtype, compared too
    allowed: list[Any] | None = None  # attr values or dtype names allowed
    forbidden: list[Any] | None = None  # attr values refused
    default: Any = None  # attr: value when the attribute is absent
    max_value: float | None = None  # attr: numeric upper bound (exclusive when strict)
    value: int | None = None  # max_rank


@dataclass
class OpRule:
    """How a target treats one op: its listing status, opset range, constraints and a note."""

    status: str = "supported"
    since: int | None = None  # lowest op version implemented
    until: int | None = None  # highest op version implemented
    reason: str = ""  # why risky / unsupported / cpu
    constraints: list[Constraint] = field(default_factory=list)
    dtypes: dict[str, list[str]] | None = None  # type parameter -> allowed ONNX type strings (ORT profile)
    ranges: list[tuple[int, int]] | None = None  # exact version ranges with kernels (ORT profile)


@dataclass
class GlobalRules:
    dynamic_shapes: str = "allowed"  # allowed | risky | unsupported
    dynamic_reason: str = ""
    data_dependent: str = "allowed"  # data-dependent output shapes (NonZero, Unique, non-constant Range, ...)
    data_dependent_reason: str = ""
    int64: str = "allowed"
    int64_reason: str = ""
    double: str = "allowed"
    double_reason: str = ""
    opset_min: int | None = None
    opset_max: int | None = None
    opset_verdict: str = "unsupported"  # verdict for a model opset outside the range
    opset_reason: str = ""
    domains: list[str] = field(default_factory=lambda: [DEFAULT_DOMAIN])  # domains whose ops are listed


@dataclass
class ShapeValueRule:
    """``shape_values:`` in a profile: the importer keeps Shape outputs as shape values (studio.inspect.shape_values),
    which only the ``accepts`` ops take; ``source`` says where that was read."""

    accepts: list[str]
    source: str


@dataclass
class Accelerated:
    """An op the op list places on the host that the toolchain runs on the accelerator in a whole graph, when
    its ``const_inputs`` are constants at build, or it sits between ``after`` and ``before`` (a pattern the
    toolchain fuses), its input 0 and outputs of the element types ``dtypes``."""

    reason: str
    const_inputs: list[int] = field(default_factory=list)
    after: str = ""  # the op producing its input 0
    before: str = ""  # an op reading its output
    dtypes: list[str] = field(default_factory=list)


@dataclass
class GraphRules:
    """``graph:`` in a profile: what the toolchain does to a whole graph before it places the nodes (constant
    and shape folding at the build's static input shapes; the host placement of integer and boolean work and of
    lookups by a runtime index), with where each rule was read (``source``). See studio.inspect.graph_model."""

    source: str
    fold: str = "constants"  # "constants" | "build_shapes" (Shape / Size are known once the inputs are fixed)
    fold_reason: str = ""
    host_dtypes: list[str] = field(default_factory=list)  # output element types whose computation runs on the host
    host_dtypes_reason: str = ""
    moves_data: list[str] = field(default_factory=list)  # layout ops exempt from host_dtypes
    runtime_index: dict[str, list[int]] = field(default_factory=dict)  # op -> index inputs: computed = host
    runtime_index_reason: str = ""
    accelerated: dict[str, Accelerated] = field(default_factory=dict)
    zero_operand: dict[str, list[int]] = field(default_factory=dict)  # op -> inputs: all zeros at build = removed
    zero_operand_reason: str = ""


@dataclass
class TargetProfile:
    """One target's op support and rules. ``unlisted`` is the verdict for ops no list mentions."""

    id: str
    name: str
    source: str
    date_read: str
    kind: str = "list"  # "list" (vendor list) | "runtime" (computed) | "none" (no public list)
    version: str = ""
    notes: str = ""
    unlisted: str = "unsupported"  # "unsupported" | "unknown"
    rules: GlobalRules = field(default_factory=GlobalRules)
    ops: dict[str, dict[str, OpRule]] = field(default_factory=dict)  # domain -> op_type -> rule
    path: str | None = None  # file it came from (None for computed profiles)
    shape_values: ShapeValueRule | None = None  # dataflow rule for importers with Relax-style shape values
    graph: GraphRules | None = None  # whole-graph rules: folding and host placement before the op verdicts

    def lookup(self, domain: str | None, op_type: str) -> OpRule | None:
        return self.ops.get(norm_domain(domain), {}).get(op_type)

    def op_count(self, status: str | None = None) -> int:
        return sum(1 for d in self.ops.values() for r in d.values() if status is None or r.status == status)

    def summary(self) -> dict[str, Any]:
        counts = {s: self.op_count(s) for s in OP_STATUSES if self.op_count(s)}
        return {"id": self.id, "name": self.name, "kind": self.kind, "version": self.version,
                "source": self.source, "date_read": self.date_read, "path": self.path,
                "domains": sorted(self.ops), "op_counts": counts, "unlisted": self.unlisted,
                "dynamic_shapes": self.rules.dynamic_shapes,
                "opset": [self.rules.opset_min, self.rules.opset_max],
                "graph": None if self.graph is None else {"fold": self.graph.fold, "source": self.graph.source}}

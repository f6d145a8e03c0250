"""The inspection report: one data object that text, JSON, HTML, SARIF and the GUI all render from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.reports import Report
from studio.inspect.dynamic import DynamicReport
from studio.inspect.model_verdict import ModelVerdict

SCHEMA_VERSION = 1
VERDICTS = ("supported", "risky", "unsupported", "unknown")
SUMMARY_VERDICTS = ("pass", "risky", "fail", "unknown")
SEVERITY_OF = {"unsupported": "error", "risky": "warning", "unknown": "note", "supported": "note"}
VERDICT_RANK = {"supported": 0, "unknown": 1, "risky": 2, "unsupported": 3}
POLICY_TARGET = "*"  # findings that hold for every target (domain policy, shape inference, boundaries)


def worst(a: str, b: str) -> str:
    return a if VERDICT_RANK[a] >= VERDICT_RANK[b] else b


@dataclass
class Finding:
    """One thing a target will refuse or may mishandle, with what to do about it.

    ``node`` is the first node key (``subgraph`` path + name) it concerns; ``nodes`` all of them when one
    finding groups identical problems of several nodes. ``target`` is a target id or "*" (every target).
    """

    target: str
    severity: str  # "error" | "warning" | "note"
    verdict: str  # "unsupported" | "risky" | "unknown"
    rule: str  # e.g. "op-unsupported", "op-version", "constraint", "dynamic-shape", "opset", "domain-policy"
    message: str
    hint: str = ""
    node: str | None = None
    op_type: str | None = None
    domain: str | None = None
    subgraph: str = ""  # "" = main graph, else e.g. "loop_0/body"
    tensor: str | None = None
    nodes: list[str] = field(default_factory=list)
    count: int = 1


@dataclass
class TargetSummary:
    id: str
    name: str
    kind: str  # "list" | "runtime" | "none"
    source: str
    verdict: str  # "pass" | "risky" | "fail" | "unknown"
    counts: dict[str, int] = field(default_factory=dict)  # node verdict -> number of nodes
    findings: dict[str, int] = field(default_factory=dict)  # severity -> number of findings
    unsupported_ops: list[str] = field(default_factory=list)
    risky_ops: list[str] = field(default_factory=list)
    unknown_ops: list[str] = field(default_factory=list)
    model: ModelVerdict | None = None  # the whole model's verdict (studio.inspect.model_verdict), from the profile


@dataclass
class ModelStats:
    nodes: int = 0  # all nodes including nested graphs
    main_graph_nodes: int = 0
    subgraphs: int = 0
    op_histogram: dict[str, int] = field(default_factory=dict)  # "Op" or "domain:Op" -> count
    parameters: int = 0
    initializer_bytes: int = 0
    initializers: int = 0
    external_data_bytes: int = 0
    external_data_files: list[str] = field(default_factory=list)
    external_tensors: int = 0
    file_bytes: int = 0
    flops: int = 0  # estimated, for ``input_shapes``
    activation_bytes_peak: int = 0
    activation_bytes_total: int = 0
    input_shapes: dict[str, list[Any]] = field(default_factory=dict)
    estimate_note: str = ""
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {dtype, shape}
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class BoundaryCheck:
    """A tensor that one part of a split model produces and another consumes."""

    tensor: str
    producer: str  # part file name
    consumer: str
    producer_dtype: str
    consumer_dtype: str
    producer_shape: list[Any] | None
    consumer_shape: list[Any] | None
    status: str  # "ok" | "mismatch" | "risky"
    message: str = ""


@dataclass
class InspectionReport(Report):
    schema_version: int = SCHEMA_VERSION
    model: str = ""
    ir_version: int = 0
    producer: str = ""
    opset_imports: dict[str, int] = field(default_factory=dict)
    allowed_domains: list[str] = field(default_factory=list)
    stats: ModelStats = field(default_factory=ModelStats)
    targets: dict[str, TargetSummary] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    dynamic: DynamicReport = field(default_factory=DynamicReport)
    node_verdicts: dict[str, dict[str, str]] = field(default_factory=dict)  # target -> node key -> verdict
    node_reasons: dict[str, dict[str, str]] = field(default_factory=dict)  # target -> node key -> reason
    boundaries: list[BoundaryCheck] = field(default_factory=list)
    shape_inference: str = "passed"  # "passed" | "failed: ..."
    timings: dict[str, float] = field(default_factory=dict)
    # `inspect --verify`: per target, the real tool's answer beside the profile's (studio.verify.run:
    # {"verifiers": [{name, target, ok, reason}], "comparisons": [Comparison.to_dict()], "results": [...]})
    verification: dict[str, Any] = field(default_factory=dict)
    # target -> the verifiers installed for it ({name, ok, reason}): what `--verify` would ask (the CLI fills it)
    verifiers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def to_json(self, indent: int = 2) -> str:
        """Report.to_json's text; orjson writes the dataclasses itself (none of them has a "_" field that
        Report.to_json would leave out), twice as fast as building each one's dict in Python."""
        if indent != 2 or type(self).to_dict is not Report.to_dict:
            return super().to_json(indent)
        try:
            import orjson
        except ImportError:  # pragma: no cover - a core dependency
            return super().to_json(indent)
        from studio.core.reports import _orjson_default

        opt = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_INDENT_2
        try:
            return orjson.dumps(self, default=_orjson_default, option=opt).decode()
        except TypeError:  # ints beyond 64 bits and the like: the standard library's way
            return super().to_json(indent)

    # -- queries used by the CLI and the GUI ----------------------------------------------------------
    def findings_for(self, target: str) -> list[Finding]:
        return [f for f in self.findings if f.target in (target, "*")]

    def verdict_of(self, target: str, node_key: str) -> str:
        return self.node_verdicts.get(target, {}).get(node_key, "supported")

    def worst_verdict(self) -> str:
        order = {"pass": 0, "unknown": 1, "risky": 2, "fail": 3}
        vs = [t.verdict for t in self.targets.values()] or ["pass"]
        return max(vs, key=lambda v: order[v])

    def fails_on(self, level: str) -> bool:
        """Gate for CI: ``unsupported`` / ``risky`` / ``dynamic`` / ``unknown``."""
        verdicts = {f.verdict for f in self.findings}
        if level == "unsupported":
            return "unsupported" in verdicts
        if level == "risky":
            return bool(verdicts & {"unsupported", "risky"})
        if level == "unknown":
            return bool(verdicts & {"unsupported", "risky", "unknown"})
        if level == "dynamic":
            return not self.dynamic.is_static
        raise ValueError(level)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> InspectionReport:
        """Rebuild a report saved with ``save``/``to_json`` (the GUI reopens saved reports)."""
        from studio.inspect.dynamic import DynamicOrigin, DynamicTensor

        d = dict(data)
        dyn = d.get("dynamic") or {}
        d["dynamic"] = DynamicReport(
            dynamic_inputs=dyn.get("dynamic_inputs", {}),
            origins=[DynamicOrigin(**o) for o in dyn.get("origins", [])],
            tensors={k: DynamicTensor(**v) for k, v in dyn.get("tensors", {}).items()},
            data_dependent_nodes=dyn.get("data_dependent_nodes", []))
        d["stats"] = ModelStats(**d.get("stats", {}))
        d["targets"] = {k: TargetSummary(**{**v, "model": ModelVerdict.from_dict(v["model"]) if v.get("model")
                                            else None}) for k, v in d.get("targets", {}).items()}
        d["findings"] = [Finding(**f) for f in d.get("findings", [])]
        d["boundaries"] = [BoundaryCheck(**b) for b in d.get("boundaries", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})

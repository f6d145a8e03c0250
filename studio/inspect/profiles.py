"""Target profiles: what an accelerator accepts, as data (studio/resources/targets/*.yaml or a user's own file).

A profile is read once, validated against its schema (``profile_schema``, pydantic: only on a cache miss; a
malformed file raises TargetError naming the file, line and field), and
answers ``lookup(domain, op_type)`` with the op's listing status and constraints. The ONNX Runtime CPU
profile is not a file: it is computed from the installed onnxruntime's kernel registry (see ort_profile).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import TargetError

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


# -- parsing ------------------------------------------------------------------------------------------

def parse_profile(data: Any, path: Path | str, text: str | None = None) -> TargetProfile:
    """Validate one profile mapping (already parsed from YAML; ``text`` is that YAML, for the line numbers of
    errors) against the schema in ``profile_schema`` and build the TargetProfile; TargetError names the file,
    line and field of a malformed one. pydantic is imported here, on a cache miss only."""
    from studio.inspect.profile_schema import parse

    return parse(data, path, text)


def load_profile_file(path: Path | str) -> TargetProfile:
    import yaml

    from studio.core import yamlio

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TargetError(f"cannot read target profile: {exc}", offending=str(path),
                          hint="check the file exists and is UTF-8 YAML") from None
    try:
        data = yamlio.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise TargetError(f"target profile is not valid YAML: {exc}", offending=where,
                          hint="fix the YAML syntax (indentation, colons, list dashes)") from None
    if isinstance(data, dict) and data.get("kind") == "runtime" and data.get("id") == "ort-cpu":
        from studio.inspect.ort_profile import ort_cpu_profile

        meta = parse_profile(data, path, text)
        computed = ort_cpu_profile()
        computed.path, computed.notes = str(path), meta.notes or computed.notes
        computed.source, computed.date_read = meta.source, computed.date_read
        return computed
    return parse_profile(data, path, text)


# -- discovery ----------------------------------------------------------------------------------------

def builtin_dir() -> Path:
    """The shipped target profiles; a missing or empty folder (a broken install) is an InstallError."""
    from studio.core.paths import resource_folder

    return resource_folder("targets", "*.yaml")


@functools.lru_cache(maxsize=64)
def _cached(path: str, mtime: float) -> TargetProfile:
    from studio.inspect.profile_cache import cached_profile_file

    return cached_profile_file(path, load_profile_file)


def _load_cached(path: Path) -> TargetProfile:
    return _cached(str(path), path.stat().st_mtime)


def _profile_files(profile_dirs: list[Path] | None) -> list[Path]:
    dirs = [builtin_dir()] + [Path(d) for d in (profile_dirs or [])]
    files: list[Path] = []
    for i, d in enumerate(dirs):
        if not d.exists():
            if i > 0:
                raise TargetError("profile folder does not exist", offending=str(d),
                                  hint="pass an existing folder holding <id>.yaml files to --profile-dir")
            continue
        if d.is_file():
            files.append(d)
            continue
        files.extend(sorted(list(d.glob("*.yaml")) + list(d.glob("*.yml"))))
    return files


def plugin_profiles() -> list[TargetProfile]:
    """Profiles contributed by plugins (manifest ``provides.targets``); a broken one is skipped and its error
    kept on the contribution for `studio plugins`, so one bad plugin never hides the other targets."""
    from studio.core.plugins import target_sources

    out: list[TargetProfile] = []
    for contrib, value in target_sources():
        try:
            if isinstance(value, Path):
                out.append(_load_cached(value))
            elif isinstance(value, dict):
                out.append(parse_profile(value, f"{contrib.plugin.name}:{contrib.name}"))
            elif isinstance(value, TargetProfile):
                out.append(value)
            else:
                contrib.fail(f"target resolved to {type(value).__name__}, not a YAML path or profile mapping")
        except TargetError as exc:
            contrib.fail(exc.render())
    return out


def list_targets(profile_dirs: list[Path] | None = None) -> list[TargetProfile]:
    """Built-in profiles, then plugins', then user ones; a later profile with the same id replaces the earlier."""
    builtin = _profile_files(None)
    user = _profile_files(profile_dirs)[len(builtin):]
    by_id: dict[str, TargetProfile] = {}
    for prof in [*map(_load_cached, builtin), *plugin_profiles(), *map(_load_cached, user)]:
        by_id[prof.id] = prof
    order = {tid: i for i, tid in enumerate(BUILTIN_IDS)}
    return sorted(by_id.values(), key=lambda p: (order.get(p.id, len(order)), p.id))


def load_target(target_id: str, profile_dirs: list[Path] | None = None) -> TargetProfile:
    profs = {p.id: p for p in list_targets(profile_dirs)}
    if target_id not in profs:
        raise TargetError(f"unknown target '{target_id}'", offending=target_id,
                          hint=f"known targets: {', '.join(profs)}; add your own with --profile-dir")
    return profs[target_id]


def resolve_targets(names: list[str] | None, profile_dirs: list[Path] | None = None) -> list[TargetProfile]:
    """``None``/``[]``/``["all"]`` -> every profile; else those ids, in the order given."""
    allp = list_targets(profile_dirs)
    if not names or "all" in names:
        return allp
    by_id = {p.id: p for p in allp}
    out = []
    for n in names:
        if n not in by_id:
            raise TargetError(f"unknown target '{n}'", offending=n,
                              hint=f"known targets: {', '.join(by_id)} (or 'all'); add your own with --profile-dir")
        if by_id[n] not in out:
            out.append(by_id[n])
    return out

"""Target profiles: what an accelerator accepts, as data (studio/resources/targets/*.yaml or a user's own file).

A profile is read once, validated (malformed files raise TargetError naming the file and field), and
answers ``lookup(domain, op_type)`` with the op's listing status and constraints. The ONNX Runtime CPU
profile is not a file: it is computed from the installed onnxruntime's kernel registry (see ort_profile).
"""

from __future__ import annotations

import datetime as _dt
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import TargetError

PROFILE_SCHEMA = 1
DEFAULT_DOMAIN = "ai.onnx"
OP_STATUSES = ("supported", "risky", "unsupported", "unknown", "cpu")
RULE_LEVELS = ("allowed", "risky", "unsupported")
CONSTRAINT_KINDS = ("const_input", "attr", "batch1", "dtype", "max_rank", "static_shape", "same_dtype")
BUILTIN_IDS = ("tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax", "ort-cpu",
               "hailo-8", "mlu370")


def norm_domain(domain: str | None) -> str:
    return DEFAULT_DOMAIN if domain in (None, "", "ai.onnx") else str(domain)


@dataclass
class Constraint:
    """One per-op rule; ``verdict`` is what a node gets when it breaks the rule."""

    kind: str  # const_input | attr | batch1 | dtype | max_rank | static_shape | same_dtype
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
                "opset": [self.rules.opset_min, self.rules.opset_max]}


# -- parsing ------------------------------------------------------------------------------------------

def _err(path: Path | str, field_: str, msg: str) -> TargetError:
    return TargetError(f"malformed target profile: {msg}", offending=f"{path}: {field_}",
                       hint="see the 'Inspector' section of README.md for the profile format, or compare "
                            "with studio/resources/targets/tensorrt.yaml")


def _expect(cond: bool, path: Path | str, field_: str, msg: str) -> None:
    if not cond:
        raise _err(path, field_, msg)


def _str_list(v: Any, path: Path | str, field_: str) -> list[str]:
    _expect(isinstance(v, list) and all(isinstance(x, str) for x in v), path, field_, "expected a list of names")
    return list(v)


def _parse_constraint(raw: Any, path: Path | str, where: str) -> Constraint:
    _expect(isinstance(raw, dict), path, where, "a constraint must be a mapping")
    kind = raw.get("kind")
    _expect(kind in CONSTRAINT_KINDS, path, f"{where}.kind", f"kind must be one of {', '.join(CONSTRAINT_KINDS)}")
    unknown = set(raw) - {"kind", "reason", "verdict", "inputs", "name", "allowed", "forbidden", "default",
                          "max_value", "value"}
    _expect(not unknown, path, where, f"unknown keys {sorted(unknown)}")
    verdict = raw.get("verdict", "unsupported")
    _expect(verdict in ("unsupported", "risky"), path, f"{where}.verdict", "verdict must be unsupported or risky")
    reason = raw.get("reason", "")
    _expect(isinstance(reason, str) and reason != "", path, f"{where}.reason", "every constraint needs a reason")
    inputs = raw.get("inputs", [0] if kind == "dtype" else [])
    _expect(isinstance(inputs, list) and all(isinstance(i, int) for i in inputs), path, f"{where}.inputs",
            "inputs must be a list of input indices")
    if kind == "const_input":
        _expect(bool(inputs), path, f"{where}.inputs", "const_input needs the input indices")
    if kind == "same_dtype":
        _expect(len(inputs) + ("name" in raw) >= 2, path, f"{where}.inputs",
                "same_dtype compares two or more inputs (or inputs and the dtype attribute 'name')")
    if kind == "attr":
        _expect(isinstance(raw.get("name"), str), path, f"{where}.name", "attr constraint needs the attribute name")
        _expect(any(k in raw for k in ("allowed", "forbidden", "max_value")), path, where,
                "attr constraint needs allowed, forbidden or max_value")
    if kind == "dtype":
        _expect(isinstance(raw.get("allowed"), list), path, f"{where}.allowed", "dtype constraint needs allowed dtypes")
    if kind == "max_rank":
        _expect(isinstance(raw.get("value"), int), path, f"{where}.value", "max_rank needs an integer value")
    return Constraint(kind=kind, reason=reason, verdict=verdict, inputs=list(inputs), name=raw.get("name"),
                      allowed=raw.get("allowed"), forbidden=raw.get("forbidden"), default=raw.get("default"),
                      max_value=raw.get("max_value"), value=raw.get("value"))


def _opset_pair(v: Any, path: Path | str, where: str) -> tuple[int | None, int | None]:
    if isinstance(v, int):
        return v, None
    _expect(isinstance(v, list) and len(v) == 2 and all(x is None or isinstance(x, int) for x in v),
            path, where, "an opset range is [min, max] (either may be null) or a single minimum")
    return v[0], v[1]


def parse_profile(data: Any, path: Path | str) -> TargetProfile:
    """Validate one profile mapping (already parsed from YAML) and build the TargetProfile."""
    _expect(isinstance(data, dict), path, "(top)", "a profile must be a YAML mapping")
    if isinstance(data.get("date_read"), (_dt.date, _dt.datetime)):
        data = {**data, "date_read": data["date_read"].isoformat()}
    for key in ("id", "name", "source", "date_read"):
        _expect(isinstance(data.get(key), str) and data.get(key), path, key, f"'{key}' is required (a string)")
    allowed_top = {"schema", "id", "name", "version", "source", "date_read", "kind", "notes", "unlisted", "rules",
                   "supported", "unsupported", "unknown", "cpu_fallback", "risky", "opsets", "constraints",
                   "shape_values"}
    unknown = set(data) - allowed_top
    _expect(not unknown, path, "(top)", f"unknown keys {sorted(unknown)}")
    _expect(data.get("schema", PROFILE_SCHEMA) == PROFILE_SCHEMA, path, "schema", f"schema must be {PROFILE_SCHEMA}")
    kind = data.get("kind", "list")
    _expect(kind in ("list", "runtime", "none"), path, "kind", "kind must be list, runtime or none")
    unlisted = data.get("unlisted", "unknown" if kind == "none" else "unsupported")
    _expect(unlisted in ("unsupported", "unknown", "risky"), path, "unlisted",
            "unlisted must be unsupported, unknown or risky")

    rules = GlobalRules()
    raw_rules = data.get("rules", {}) or {}
    _expect(isinstance(raw_rules, dict), path, "rules", "rules must be a mapping")
    for key, why in (("dynamic_shapes", "dynamic_reason"), ("data_dependent", "data_dependent_reason"),
                     ("int64", "int64_reason"), ("double", "double_reason")):
        if key in raw_rules:
            _expect(raw_rules[key] in RULE_LEVELS, path, f"rules.{key}", f"must be one of {', '.join(RULE_LEVELS)}")
            setattr(rules, key, raw_rules[key])
        if why in raw_rules:
            setattr(rules, why, str(raw_rules[why]))
    if "opset" in raw_rules:
        rules.opset_min, rules.opset_max = _opset_pair(raw_rules["opset"], path, "rules.opset")
    if "opset_verdict" in raw_rules:
        _expect(raw_rules["opset_verdict"] in ("unsupported", "risky"), path, "rules.opset_verdict",
                "must be unsupported or risky")
        rules.opset_verdict = raw_rules["opset_verdict"]
    rules.opset_reason = str(raw_rules.get("opset_reason", ""))
    extra = set(raw_rules) - {"dynamic_shapes", "dynamic_reason", "data_dependent", "data_dependent_reason", "int64", "int64_reason", "double",
                              "double_reason", "opset", "opset_verdict", "opset_reason"}
    _expect(not extra, path, "rules", f"unknown keys {sorted(extra)}")

    prof = TargetProfile(id=data["id"], name=data["name"], source=data["source"], date_read=str(data["date_read"]),
                         kind=kind, version=str(data.get("version", "")), notes=str(data.get("notes", "")),
                         unlisted=unlisted, rules=rules, path=str(path))

    def put(domain: str, op: str, status: str, reason: str = "") -> OpRule:
        d = prof.ops.setdefault(norm_domain(domain), {})
        rule = d.get(op)
        if rule is None:
            rule = d[op] = OpRule(status=status, reason=reason)
        else:
            rule.status, rule.reason = status, reason or rule.reason
        return rule

    for section, status in (("supported", "supported"), ("unsupported", "unsupported"), ("unknown", "unknown")):
        raw = data.get(section, {}) or {}
        _expect(isinstance(raw, dict), path, section, "expected a mapping of domain -> list of op names")
        for domain, ops in raw.items():
            for op in _str_list(ops, path, f"{section}.{domain}"):
                put(domain, op, status)
    for op_key, reason in (data.get("cpu_fallback", {}) or {}).items():
        domain, op = _split_key(op_key)
        _expect(isinstance(reason, str), path, f"cpu_fallback.{op_key}", "value must be the reason (a string)")
        put(domain, op, "cpu", reason)
    raw_risky = data.get("risky", {}) or {}
    _expect(isinstance(raw_risky, dict), path, "risky", "expected a mapping of op -> reason")
    for op_key, reason in raw_risky.items():
        domain, op = _split_key(op_key)
        _expect(isinstance(reason, str) and reason, path, f"risky.{op_key}", "value must be the reason (a string)")
        put(domain, op, "risky", reason)
    for op_key, rng in (data.get("opsets", {}) or {}).items():
        domain, op = _split_key(op_key)
        rule = prof.lookup(domain, op)
        _expect(rule is not None, path, f"opsets.{op_key}", "opset range given for an op no list mentions")
        rule.since, rule.until = _opset_pair(rng, path, f"opsets.{op_key}")
    raw_c = data.get("constraints", {}) or {}
    _expect(isinstance(raw_c, dict), path, "constraints", "expected a mapping of op -> list of constraints")
    for op_key, items in raw_c.items():
        domain, op = _split_key(op_key)
        rule = prof.lookup(domain, op)
        _expect(rule is not None, path, f"constraints.{op_key}", "constraints given for an op no list mentions")
        _expect(isinstance(items, list), path, f"constraints.{op_key}", "expected a list of constraints")
        rule.constraints = [_parse_constraint(c, path, f"constraints.{op_key}[{i}]") for i, c in enumerate(items)]
    if "shape_values" in data:
        sv = data["shape_values"]
        _expect(isinstance(sv, dict) and set(sv) <= {"accepts", "source"}, path, "shape_values",
                "shape_values is a mapping with 'accepts' (op names) and 'source'")
        _expect(isinstance(sv.get("source"), str) and sv["source"] != "", path, "shape_values.source",
                "shape_values needs its source (where the importer's behaviour was read)")
        prof.shape_values = ShapeValueRule(_str_list(sv.get("accepts"), path, "shape_values.accepts"), sv["source"])
    rules.domains = sorted(prof.ops) or [DEFAULT_DOMAIN]
    return prof


def _split_key(key: str) -> tuple[str, str]:
    """``"com.microsoft:Gelu"`` -> (com.microsoft, Gelu); a bare name is in the default domain."""
    if ":" in key:
        d, op = key.rsplit(":", 1)
        return d, op
    return DEFAULT_DOMAIN, key


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
        raise TargetError(f"target profile is not valid YAML: {exc}", offending=str(path),
                          hint="fix the YAML syntax (indentation, colons, list dashes)") from None
    if isinstance(data, dict) and data.get("kind") == "runtime" and data.get("id") == "ort-cpu":
        from studio.inspect.ort_profile import ort_cpu_profile

        meta = parse_profile(data, path)
        computed = ort_cpu_profile()
        computed.path, computed.notes = str(path), meta.notes or computed.notes
        computed.source, computed.date_read = meta.source, computed.date_read
        return computed
    return parse_profile(data, path)


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

"""Target profiles: what an accelerator accepts, as data (studio/resources/targets/*.yaml or a user's own file).

A profile is read once, validated against its schema (``profile_schema``, pydantic: only on a cache miss; a
malformed file raises TargetError naming the file, line and field), and
answers ``lookup(domain, op_type)`` with the op's listing status and constraints. The ONNX Runtime CPU
profile is not a file: it is computed from the installed onnxruntime's kernel registry (see ort_profile).
The dataclasses are ``profile_model``'s (re-exported here).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from studio.core.errors import TargetError
from studio.inspect.profile_model import (  # the data model, re-exported: most callers import it from here
    BUILTIN_IDS,
    CONSTRAINT_KINDS,
    DEFAULT_DOMAIN,
    OP_STATUSES,
    PROFILE_SCHEMA,
    RULE_LEVELS,
    Accelerated,
    Constraint,
    GlobalRules,
    GraphRules,
    OpRule,
    ShapeValueRule,
    TargetProfile,
    norm_domain,
)

__all__ = [  # the data model (profile_model's) and the loaders
    "PROFILE_SCHEMA", "DEFAULT_DOMAIN", "OP_STATUSES", "RULE_LEVELS", "CONSTRAINT_KINDS", "BUILTIN_IDS",
    "norm_domain", "Constraint", "OpRule", "GlobalRules", "ShapeValueRule", "Accelerated", "GraphRules",
    "TargetProfile", "parse_profile", "load_profile_file", "builtin_dir", "plugin_profiles", "list_targets",
    "load_target", "resolve_targets",
]


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

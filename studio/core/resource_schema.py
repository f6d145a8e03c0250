"""Typed schemas of the studio's resource files: what every kind shares.

Each kind is a pydantic model next to the code that reads it (targets: ``studio.inspect.profile_schema``, boards:
``studio.package.board_schema``, SLA tiers: ``studio.telemetry.sla_schema``); `studio schema KIND` prints its
JSON Schema (``SCHEMAS``). This module turns pydantic's ValidationError into the studio's own error naming the
file, the line and the field, and moves renamed keys to their new place with a warning. It is the only importer
of pydantic for resource files, and is itself imported only when a file is validated: a warm `studio inspect`
reads its target profiles from the user cache and imports neither pydantic nor yaml.
"""

from __future__ import annotations

import copy
import importlib
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from studio.core import yamlio
from studio.core.errors import StudioDeprecationWarning, StudioError

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

# kind -> (module, model class, the files it describes); `studio schema KIND`
SCHEMAS: dict[str, tuple[str, str, str]] = {
    "targets": ("studio.inspect.profile_schema", "TargetFile",
                "a target profile: studio/resources/targets/*.yaml, a --profile-dir file, WORKSPACE/targets/"),
    "boards": ("studio.package.board_schema", "BoardFile", "a board profile: studio/resources/boards/*.yaml"),
    "sla": ("studio.telemetry.sla_schema", "TiersFile", "SLA tiers: studio/resources/sla/tiers.yaml, --tiers FILE"),
}

Loc = Sequence[str | int]
M = TypeVar("M", bound=BaseModel)


class ResourceModel(BaseModel):
    """Base of every resource file model: an unknown key is an error (a typo is never silently ignored).

    Validators are built on first use (``built``): a file model's own, never those of the models inside it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class RenamedKeyWarning(StudioDeprecationWarning):
    """A resource file uses the old spelling of a key: it still works; the message names the file, the line and
    the new key (the CLI prints it once as ``warning: ...``: studio.core.entry)."""


_WARNED: dict[Any, Any] = {}  # warnings.warn_explicit's registry: each (message, line) once per process


def built(model: type[M]) -> type[M]:
    """``model`` with its validator built (once; ``defer_build`` leaves that to the first use)."""
    if not model.__pydantic_complete__:
        model.model_rebuild()
    return model


def schema_model(kind: str) -> type[BaseModel]:
    """The model of one kind of ``SCHEMAS`` (KeyError for another), built."""
    module, cls, _ = SCHEMAS[kind]
    model: type[BaseModel] = getattr(importlib.import_module(module), cls)
    return built(model)


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one kind, as editors and CI validators take it."""
    _, _, files = SCHEMAS[kind]
    schema = schema_model(kind).model_json_schema()
    return {"$schema": JSON_SCHEMA_DIALECT, **schema, "$comment": f"studio schema {kind}: {files}"}


def field_path(loc: Loc) -> str:
    """``("constraints", "TopK", 0, "name")`` -> ``constraints.TopK[0].name``; ``()`` -> ``(top)``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top)"


def resource_error(error_cls: type[StudioError], what: str, path: Path | str, loc: Loc, message: str, *,
                   text: str | None = None, hint: str = "", line_loc: Loc | None = None,
                   problems: list[dict[str, Any]] | None = None) -> StudioError:
    """The error for one place in a resource file: ``offending`` is ``FILE:LINE: FIELD`` (no line without the
    file's text). ``line_loc`` is where the line is looked up when it is not ``loc`` itself (an unknown key)."""
    line = yamlio.node_line(text, list(line_loc if line_loc is not None else loc)) if text is not None else None
    field = field_path(loc)
    where = f"{path}:{line}" if line else str(path)
    details: dict[str, Any] = {"file": str(path), "line": line, "field": field}
    if problems:
        details["problems"] = problems
    return error_cls(f"malformed {what}: {message}", offending=f"{where}: {field}", hint=hint, details=details)


def _data_loc(data: Any, loc: Loc, keep_last: bool) -> tuple[str | int, ...]:
    """pydantic's loc without the union members and tags it adds (names that are no place in the file)."""
    out: list[str | int] = []
    cur = data
    for i, part in enumerate(loc):
        if isinstance(cur, Mapping) and part in cur:
            out.append(part)
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            out.append(part)
            cur = cur[part]
        elif keep_last and i == len(loc) - 1:
            out.append(part)
    return tuple(out)


def _problem(data: Any, err: Mapping[str, Any]) -> tuple[tuple[str | int, ...], str, str]:
    """(loc in the file, error type, message) of one pydantic error."""
    kind = str(err["type"])
    loc = _data_loc(data, err["loc"], keep_last=kind in ("missing", "extra_forbidden"))
    msg = str(err["msg"]).removeprefix("Value error, ")
    if kind == "missing":
        msg = f"'{loc[-1]}' is required" if loc else msg
    elif kind in ("model_type", "model_attributes_type", "dict_type"):
        msg = "must be a mapping"
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = str((err.get("ctx") or {}).get("discriminator", "")).strip("'")
        if tag:
            loc = (*loc, tag)
        if kind == "union_tag_not_found":
            msg = f"'{tag}' is required"
    return loc, kind, msg


def validate(model: type[M], data: Any, *, path: Path | str, text: str | None, error_cls: type[StudioError],
             what: str, hint: str) -> M:
    """``model.model_validate(data)``, or the studio error for the first problem (all of them in details)."""
    try:
        return built(model).model_validate(data)
    except PydanticValidationError as exc:
        raise _as_studio_error(exc, data, path=path, text=text, error_cls=error_cls, what=what,
                               hint=hint) from None


def _as_studio_error(exc: PydanticValidationError, data: Any, *, path: Path | str, text: str | None,
                     error_cls: type[StudioError], what: str, hint: str) -> StudioError:
    found = [_problem(data, e) for e in exc.errors(include_url=False)]
    problems = [{"field": field_path(loc), "message": msg} for loc, _, msg in found]
    loc, kind, msg = found[0]
    line_loc: tuple[str | int, ...] | None = None
    told = 1
    if kind == "extra_forbidden":  # reported on the mapping that holds them, as one list, at the first one's line
        parent = loc[:-1]
        unknown = sorted(str(lc[-1]) for lc, k, _ in found if k == "extra_forbidden" and lc[:-1] == parent)
        loc, line_loc, msg, told = parent, tuple(loc), f"unknown keys {unknown}", len(unknown)
    more = len(found) - told
    if more:
        msg += f" (and {more} more problem{'s' if more > 1 else ''} in the file)"
    return resource_error(error_cls, what, path, loc, msg, text=text, hint=hint, line_loc=line_loc,
                          problems=problems)


def apply_renames(data: Any, renames: Mapping[tuple[str, ...], tuple[str, ...]], *, path: Path | str,
                  text: str | None, what: str, kind: str) -> Any:
    """Old spellings moved to their new place (in a copy), each with a RenamedKeyWarning naming the file, the
    line and both keys (issued at that file and line); where both are given, the new one wins. A mapping emptied
    by the move is dropped."""
    if not isinstance(data, dict) or not any(_get(data, old) is not _MISSING for old in renames):
        return data
    data = copy.deepcopy(data)
    for old, new in renames.items():
        value = _get(data, old)
        if value is _MISSING:
            continue
        parent = _get(data, old[:-1])
        line = yamlio.node_line(text, list(old)) if text is not None else None
        taken = _get(data, new) is not _MISSING
        del parent[old[-1]]
        if not parent and len(old) > 1:
            del _get(data, old[:-2])[old[-2]]
        if not taken:
            target = data
            for part in new[:-1]:
                target = target.setdefault(part, {})
                if not isinstance(target, dict):
                    break
            else:
                target[new[-1]] = value
        what_now = "ignored: the new one is given too" if taken else "it still works"
        warnings.warn_explicit(f"{path}:{line or '?'}: '{'.'.join(old)}' is the old spelling of "
                               f"'{'.'.join(new)}' in a {what} ({what_now}); rename it (`studio schema {kind}` "
                               f"prints the format)", RenamedKeyWarning, str(path), line or 0, registry=_WARNED)
    return data


_MISSING = object()


def _get(data: Any, loc: tuple[str, ...]) -> Any:
    cur = data
    for part in loc:
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur

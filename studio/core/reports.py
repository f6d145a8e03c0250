"""Reports are data first: dataclasses with a schema_version, serialised to JSON; renderers read them."""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import Any

from studio.core.atomic import write_text_atomic

try:  # orjson writes a 5,000-node inspection report about 20x faster than to_jsonable + json.dumps
    import orjson as _orjson
except ImportError:  # pragma: no cover - a core dependency; plain json still works
    _orjson = None


def to_jsonable(obj: Any) -> Any:
    """Dataclasses, enums, paths and numpy scalars to plain JSON values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if not f.name.startswith("_")}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [to_jsonable(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        try:
            return obj.item()
        except (TypeError, ValueError):
            pass
    if isinstance(obj, float) and obj != obj:  # NaN is not JSON
        return None
    return obj


_FIELDS: dict[type, tuple[str, ...]] = {}


def _orjson_default(obj: Any) -> Any:
    """What orjson does not write itself, the way ``to_jsonable`` writes it."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS.get(type(obj))
        if names is None:
            names = _FIELDS[type(obj)] = tuple(f.name for f in dataclasses.fields(obj) if not f.name.startswith("_"))
        return {n: getattr(obj, n) for n in names}
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item):
        return obj.item()
    raise TypeError(type(obj).__name__)


def dumps(obj: Any, indent: int | None = 2) -> str:
    """JSON text of a report or plain data, same content as ``json.dumps(to_jsonable(obj))``: orjson when it
    can write it (2-space indent or none), else the standard library (other indents, ints beyond 64 bits)."""
    if _orjson is not None and indent in (None, 2):
        opt = _orjson.OPT_PASSTHROUGH_DATACLASS | _orjson.OPT_NON_STR_KEYS | _orjson.OPT_SERIALIZE_NUMPY
        try:
            return _orjson.dumps(obj, default=_orjson_default,
                                 option=opt | (_orjson.OPT_INDENT_2 if indent else 0)).decode()
        except TypeError:
            pass
    return json.dumps(to_jsonable(obj), indent=indent, default=str)


class Report:
    """Mixin for report dataclasses: ``to_dict``, ``to_json`` and ``save``."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)

    def to_json(self, indent: int = 2) -> str:
        custom = type(self).to_dict is not Report.to_dict  # a report that shapes its own dict
        return dumps(self.to_dict() if custom else self, indent=indent)

    def save(self, path: Path | str) -> Path:
        return write_text_atomic(path, self.to_json() + "\n")

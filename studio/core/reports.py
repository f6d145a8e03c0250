"""Reports are data first: dataclasses with a schema_version, serialised to JSON; renderers read them."""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import Path
from typing import Any

from studio.core.atomic import write_json_atomic


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


class Report:
    """Mixin for report dataclasses: ``to_dict``, ``to_json`` and ``save``."""

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)

    def to_json(self, indent: int = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: Path | str) -> Path:
        return write_json_atomic(path, self.to_dict())

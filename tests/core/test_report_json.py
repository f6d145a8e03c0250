"""Reports written through orjson hold what to_jsonable + json.dumps would write."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from studio.core.reports import Report, dumps, to_jsonable


class Colour(enum.Enum):
    RED = "red"


@dataclass
class Inner:
    path: Path
    tags: set[str]
    value: float


@dataclass
class Outer(Report):
    name: str
    inner: list[Inner]
    by_id: dict[int, str]
    colour: Colour
    np_value: object
    nan: float
    _private: str = "left out"
    extra: dict[str, object] = field(default_factory=dict)


def _sample() -> Outer:
    return Outer(name="ü model", inner=[Inner(Path("/a/b.onnx"), {"x"}, 1.5)], by_id={3: "three"},
                 colour=Colour.RED, np_value=np.float32(2.5), nan=float("nan"), extra={"big": 2**70})


def test_same_content_as_the_standard_library() -> None:
    r = _sample()
    r.extra = {"n": 1}
    assert json.loads(r.to_json()) == json.loads(json.dumps(to_jsonable(r)))
    assert "_private" not in json.loads(r.to_json())


def test_what_orjson_refuses_falls_back() -> None:
    r = _sample()  # 2**70 does not fit orjson's 64-bit integers
    assert json.loads(r.to_json())["extra"]["big"] == 2**70
    assert json.loads(dumps({"p": Path("/x")}, indent=4)) == {"p": "/x"}  # other indents: the stdlib


def test_save_is_whole_json(tmp_path: Path) -> None:
    out = _sample().save(tmp_path / "r.json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["inner"][0]["path"] == "/a/b.onnx" and data["nan"] is None and data["colour"] == "red"

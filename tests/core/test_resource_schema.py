"""Resource file schemas: `studio schema KIND` prints a JSON Schema every shipped file passes (checked with the
jsonschema package where installed, else with the pydantic model the schema comes from), an unknown kind exits 2,
and errors name the file, the line and the field."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from studio.cli.main import main
from studio.core import yamlio
from studio.core.paths import resources_dir
from studio.core.resource_schema import SCHEMAS, field_path, schema_model

FILES = {"targets": ("targets", "*.yaml"), "boards": ("boards", "*.yaml"), "sla": ("sla", "*.yaml")}


def _as_json(v: Any) -> Any:
    """What an editor's YAML plugin hands the schema: dates as their text."""
    if isinstance(v, dict):
        return {k: _as_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_as_json(x) for x in v]
    return v.isoformat() if isinstance(v, (dt.date, dt.datetime)) else v


def _printed(kind: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["schema", kind]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", list(FILES))
def test_every_shipped_file_passes_the_printed_schema(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    schema = _printed(kind, capsys)
    assert schema["$schema"].endswith("2020-12/schema") and schema["type"] == "object"
    assert schema["additionalProperties"] is False  # a typo in a key is an error
    folder, pattern = FILES[kind]
    files = sorted((resources_dir() / folder).glob(pattern))
    assert files
    model = schema_model(kind)
    if importlib.util.find_spec("jsonschema") is not None:
        import jsonschema

        validator = jsonschema.Draft202012Validator(schema)
        for f in files:
            errors = [e.message for e in validator.iter_errors(_as_json(yamlio.safe_load(f.read_text())))]
            assert not errors, (f, errors)
        bad = {"nope": 1}
        assert list(validator.iter_errors(bad))
    else:  # the schema is the model's own: validating with the model is validating with it
        assert schema["properties"].keys() == model.model_json_schema()["properties"].keys()
        for f in files:
            model.model_validate(yamlio.safe_load(f.read_text()))


def test_example_plugin_profile_passes_too() -> None:
    f = Path(__file__).resolve().parents[2] / "plugins/studio-example/src/studio_example/targets/example-npu.yaml"
    schema_model("targets").model_validate(yamlio.safe_load(f.read_text()))


def test_schema_output_file_and_unknown_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "boards.schema.json"
    assert main(["schema", "boards", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["title"] == "BoardFile"
    capsys.readouterr()
    assert main(["schema", "fleet"]) == 2
    err = capsys.readouterr().err
    assert "unknown resource kind 'fleet'" in err and "targets, boards, sla" in err
    assert set(SCHEMAS) == {"targets", "boards", "sla"}


def test_file_models_are_built_on_first_use() -> None:
    from studio.core import resource_schema as rs
    from studio.telemetry.sla_schema import CostSpec

    model = rs.built(CostSpec)  # a model inside a file's model: not built until asked for
    assert model.__pydantic_complete__ and rs.built(CostSpec) is model


def test_field_path_and_node_line() -> None:
    assert field_path(()) == "(top)"
    assert field_path(("constraints", "TopK", 0, "name")) == "constraints.TopK[0].name"
    text = "a: 1\nb:\n  c:\n    - x\n    - {d: 2}\n"
    assert yamlio.node_line(text, ["b", "c", 1, "d"]) == 5
    assert yamlio.node_line(text, ["b", "missing"]) == 2  # the deepest node found
    assert yamlio.node_line("a: [unclosed\n", ["a"]) is None


def test_warm_inspect_imports_no_pydantic(tmp_path: Path) -> None:
    """Parsed profiles come from the user cache: a warm run needs neither yaml nor pydantic."""
    from tests.edge.helpers import make_mlp

    model = make_mlp(tmp_path / "m.onnx")
    code = ("import sys; from studio.cli.main import main; "
            f"rc = main(['inspect', {str(model)!r}, '--target', 'all', '--format', 'json', '--output', "
            f"{str(tmp_path / 'r.json')!r}, '--quiet']); "
            "print(rc, 'pydantic' in sys.modules, 'yaml' in sys.modules)")
    env = {**os.environ, "STUDIO_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("STUDIO_NO_CACHE", None)
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert cold.stdout.split()[0] in ("0", "1") and cold.stdout.split()[1] == "True"  # a cache miss validates
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert warm.stdout.split()[1:] == ["False", "False"], warm.stdout

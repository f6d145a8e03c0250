"""Workspace, settings, atomic writes, plugins and the CLI's error contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core.atomic import atomic_path, write_json_atomic
from studio.core.errors import InputError, StudioError
from studio.core.plugins import discover
from studio.core.settings import MAX_RECENT, Settings
from studio.core.workspace import Workspace, detect_model_kind


def test_workspace_round_trip_and_reopen(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws", name="mine")
    for sub in ("models", "reports", "targets", "recordings"):
        assert (ws.root / sub).is_dir()
    onnx_file = ws.models_dir / "m.onnx"
    onnx_file.write_bytes(b"\x08\x07")
    entry = ws.add_model(onnx_file)
    assert entry.kind == "onnx" and entry.path == "models/m.onnx"
    ws.current_target = "rk3588"
    ws.save()
    again = Workspace.open(ws.root)
    assert again.name == "mine" and again.current_model == "m" and again.current_target == "rk3588"
    assert again.resolve(again.model("m")) == onnx_file.resolve()


def test_workspace_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(InputError) as ei:
        Workspace.open(tmp_path)
    assert str(tmp_path) in ei.value.offending and "workspace init" in ei.value.hint
    (tmp_path / "workspace.json").write_text("{broken")
    with pytest.raises(InputError, match="not valid JSON"):
        Workspace.open(tmp_path)
    with pytest.raises(InputError, match="holds neither"):
        detect_model_kind(tmp_path)


def test_settings_recent_workspaces_are_bounded_and_survive_a_broken_file(tmp_path: Path) -> None:
    s = Settings.load()
    for i in range(MAX_RECENT + 3):
        s.remember_workspace(tmp_path / f"w{i}")
    s.remember_workspace(tmp_path / "w0")
    s.save()
    loaded = Settings.load()
    assert len(loaded.recent_workspaces) == MAX_RECENT
    assert loaded.recent_workspaces[0].endswith("w0") and loaded.last_workspace.endswith("w0")
    Settings.path().write_text("not json")
    assert Settings.load() == Settings()


def test_atomic_path_leaves_nothing_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert json.loads(target.read_text()) == {"a": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    with atomic_path(tmp_path / "folder", is_dir=True) as d:
        assert d.is_dir()  # the temp folder exists; it is renamed into place on success
        (d / "x").write_text("1")
    assert (tmp_path / "folder" / "x").read_text() == "1"


def test_error_render_has_offending_and_hint() -> None:
    err = InputError("unknown modality 'smell'", offending="--input-signature", hint="use text, vision or audio")
    text = err.render()
    assert text.splitlines() == ["error: unknown modality 'smell'", "  at: --input-signature",
                                 "  hint: use text, vision or audio"]
    assert isinstance(err, StudioError) and err.to_dict()["kind"] == "input"


def test_builtin_plugins_are_discovered() -> None:
    names = {p.name for p in discover(refresh=True)}
    assert "builtin-targets" in names


def test_broken_plugin_is_listed_with_its_error(tmp_path: Path) -> None:
    """An entry point whose module fails to import shows up with its error; the others still work."""
    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[studio.plugins]\nbroken = broken_plugin_mod:manifest\n")
    (tmp_path / "broken_plugin_mod.py").write_text("raise ImportError('vendor SDK missing')\n")
    code = (f"import sys; sys.path.insert(0, {str(tmp_path)!r})\n"
            "from studio.cli.main import main\n"
            "sys.exit(main(['plugins', '--json']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    assert "vendor SDK missing" in rows["broken"]["error"]
    assert rows["builtin-targets"]["error"] is None


def test_cli_unknown_command_and_version() -> None:
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "frobnicate"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2 and "unknown command 'frobnicate'" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("studio ")

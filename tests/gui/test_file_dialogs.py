"""File dialogs start beside the field's value, else in the workspace, never in the working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.workspace import Workspace
from studio.gui.file_dialogs import start_dir


def test_start_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace.create(tmp_path / "ws")
    monkeypatch.chdir(tmp_path)  # wherever the process was started, the dialog does not open there
    assert start_dir(None, ws) == str(ws.root)
    assert start_dir("", ws, "models") == str(ws.models_dir)
    assert start_dir("", ws, "bundles") == str(ws.root)  # not there yet: the workspace itself
    f = ws.models_dir / "m.onnx"
    f.write_bytes(b"")
    assert start_dir(str(f), ws) == str(ws.models_dir)  # beside the file the field holds
    assert start_dir(str(ws.models_dir / "gone" / "x.onnx"), ws, "models") == str(ws.models_dir)
    assert start_dir(None, None) == str(Path.home())
    assert start_dir(None, ws, "recordings", "dashboard.png") == str(ws.recordings_dir / "dashboard.png")

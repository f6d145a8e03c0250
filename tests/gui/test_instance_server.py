"""The first window's single-instance server in process: a hand-off from another thread (the blocking client a
second launch runs) is answered on the GUI thread's event loop; the lock and socket follow the window when it
switches workspace, and an unreadable request is answered with an error, not a crash."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from studio.desktop.instance import claim, hand_off, paths_for  # noqa: E402
from studio.desktop.open_paths import classify  # noqa: E402
from tests.edge.helpers import make_mlp  # noqa: E402
from tests.gui.gui_helpers import main_window  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_ignore("propagateSizeHints", "does not support raise")]


def _in_thread(fn):  # type: ignore[no-untyped-def]
    box: dict = {}
    t = threading.Thread(target=lambda: box.update(result=fn()), daemon=True)
    t.start()
    return t, box


def test_hand_off_follows_the_window_across_workspaces(qtbot, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from studio.gui.instance_server import InstanceServer

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    (tmp_path / "run").mkdir(mode=0o700)
    from studio.core.workspace import Workspace

    win = main_window(qtbot, Workspace.create(tmp_path / "a", name="a"), None, 1280, 720)
    ws_a = win.workspace.root
    inst = claim(ws_a)
    assert inst is not None
    server = InstanceServer(win, inst)
    try:
        model = make_mlp(tmp_path / "m" / "model.onnx")
        t, box = _in_thread(lambda: hand_off(ws_a, [classify(model)], timeout=30))
        qtbot.waitUntil(lambda: "result" in box, timeout=30000)
        (item,) = box["result"]["opened"]
        assert item["shows"] == str(model) and item["current_page"] == "inspect"

        with socket.socket(socket.AF_UNIX) as s:  # garbage on the socket: an answer, not a crash
            s.connect(str(paths_for(ws_a)[1]))
            s.sendall(b"not json\n")
            t, box = _in_thread(lambda: s.recv(65536))
            qtbot.waitUntil(lambda: "result" in box, timeout=30000)
        assert json.loads(box["result"])["ok"] is False

        win.create_workspace(tmp_path / "b")
        ws_b = win.workspace.root
        freed = claim(ws_a)
        assert freed is not None  # released: a launch for A would open its own window
        freed.release()
        assert claim(ws_b) is None  # held by this window now
        t, box = _in_thread(lambda: hand_off(ws_b, [], timeout=30))
        qtbot.waitUntil(lambda: "result" in box, timeout=30000)
        assert box["result"]["ok"] and box["result"]["opened"] == []
    finally:
        server.close()


def test_an_opened_model_becomes_the_current_model_without_replacing_another(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """`studio gui A.onnx` makes A the workspace's current model (the toolbar, Compile and Package follow the file
    on screen); two files named model.onnx stay two entries, and an export folder's model.onnx is that entry."""
    from studio.core.workspace import Workspace
    from studio.gui.instance_server import open_requests

    ws = Workspace.create(tmp_path / "ws", name="ws")
    known = make_mlp(ws.root / "models" / "mlp-onnx" / "model.onnx")
    ws.add_model(known.parent, name="mlp-onnx", kind="onnx", source="export of mlp", make_current=False)
    win = main_window(qtbot, ws, None, 1280, 720)
    try:
        a = make_mlp(tmp_path / "a" / "model.onnx")
        b = make_mlp(tmp_path / "b" / "model.onnx")
        open_requests(win, [classify(a)])
        assert win.workspace.current_model == "a" and win.workspace.resolve(win.workspace.model()) == a
        open_requests(win, [classify(b)])
        assert win.workspace.current_model == "b" and win.workspace.model("a") is not None
        compile_page = win.page("compile")
        assert compile_page.model_edit.text() == str(b)
        open_requests(win, [classify(known)])  # the export folder's entry, its provenance kept
        entry = win.workspace.model()
        assert entry.name == "mlp-onnx" and entry.source == "export of mlp"
        assert [m.name for m in win.workspace.models].count("mlp-onnx") == 1
        assert win.model_combo.currentData() == "mlp-onnx"
    finally:
        win.jobs.shutdown()

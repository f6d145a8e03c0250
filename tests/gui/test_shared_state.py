"""Pages share one workspace state (real Qt offscreen, a real refused connection on loopback).

The first version's bugs: an agent added on the Package page (or by a deploy) was missing from Devices > Edge
agents, the toolbar said "0 ok of 1" while a table said connected, and Dashboards kept aiming at
127.0.0.1:8000. Here everything goes through the window's public widgets and the shared state.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from studio.core.settings import Settings
from studio.core.state import StudioState
from studio.core.workspace import DeviceEntry, Workspace
from studio.gui.main_window import MainWindow
from studio.gui.theme import apply_theme
from studio.gui.widgets.confirm import pending, press
from tests.edge.helpers import free_port

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="shared")
    w = MainWindow(ws, settings=Settings.load(), restore_state=False)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.close()


def test_an_agent_added_on_one_page_is_on_every_page(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    package, devices, dashboards = window.page("package"), window.page("devices"), window.page("dashboards")
    url = f"http://127.0.0.1:{free_port()}"
    window.go_to_page("package")
    package.agents.url_edit.setText(url)
    package.agents.add_btn.click()
    # the Devices page's own panel lists it at once, the toolbar counts it
    assert url in devices.agents_panel.agents
    assert devices.agents_panel.table.rowCount() == 1
    assert "of 1" in window.devices_label.text()
    # the poll's answer (connection refused) is the one state every view shows
    qtbot.waitUntil(lambda: window.state.device_state(url).state == "refused", timeout=20_000)
    assert window.devices_label.text() == "devices: 0 ok, 1 down of 1"
    assert "refused" in window.status_conn.text()
    # selecting it on Devices points Dashboards at it (URL and the agent's metrics URL)
    window.go_to_page("devices")
    devices.sections.setCurrentWidget(devices.agents_panel)
    devices.agents_panel.table.selectRow(0)
    assert window.state.selected_device is not None and window.state.selected_device.url == url
    assert dashboards.url_edit.text() == url
    assert dashboards.metrics_edit.text() == url + "/metrics"
    # a URL typed by the user is theirs: a later selection does not overwrite it
    dashboards.url_edit.setText("http://10.0.0.5:8000")
    window.state.add_device(DeviceEntry("t", "http://127.0.0.1:1", "triton"), select=True)
    assert dashboards.url_edit.text() == "http://10.0.0.5:8000"
    assert devices.server_list.count() == 2  # the agent and the Triton server added through the state: one list
    # removed on Devices, gone everywhere
    devices.agents_panel.table.selectRow(0)
    devices.agents_panel.remove_btn.click()
    press(pending(devices.agents_panel), "Remove")
    assert url not in package.agents.agents and package.agents.table.rowCount() == 0
    assert devices.server_list.count() == 1  # gone from the one list too


def test_reopened_workspace_restores_the_devices(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = window.workspace.root
    window.state.add_device(DeviceEntry("board", "http://127.0.0.1:9", "agent", extra={"token_file": ""}))
    window.state.add_device(DeviceEntry("local-triton", "http://127.0.0.1:8", "triton",
                                        extra={"metrics_url": "http://127.0.0.1:7/metrics"}))
    again = MainWindow(Workspace.open(root), settings=Settings.load(), restore_state=False)
    qtbot.addWidget(again)
    assert [a.url for a in again.page("devices").agents_panel.agents.values()] == ["http://127.0.0.1:9"]
    assert [a.url for a in again.page("package").agents.agents.values()] == ["http://127.0.0.1:9"]
    assert again.page("devices").server_list.count() == 2  # Triton server and agent in one list
    assert again.state.metrics_url("local-triton") == "http://127.0.0.1:7/metrics"
    assert "of 2" in again.devices_label.text()
    again.close()


def test_a_page_alone_has_a_state_of_its_own(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.gui.pages.devices_page import DevicesPage

    ws = Workspace.create(tmp_path / "alone")
    StudioState(ws).add_device(DeviceEntry("b", "http://127.0.0.1:9", "agent"))
    page = DevicesPage()
    qtbot.addWidget(page)
    page.set_context(Workspace.open(ws.root), None, None)
    assert list(page.agents_panel.agents) == ["http://127.0.0.1:9"]
    page.jobs.shutdown()


def test_the_next_step_starts_from_the_model_just_made(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    ws = window.workspace
    hf = ws.models_dir / "clip"
    hf.mkdir()
    (hf / "config.json").write_text("{}")
    window.state.add_model(hf, name="clip", kind="hf")
    out = ws.models_dir / "clip-onnx"
    out.mkdir()
    for f in ("model.onnx", "model.vision.onnx", "model.text.onnx"):
        (out / f).write_bytes(b"")
    entry = window.state.add_model(out / "model.onnx", name="clip-onnx", kind="onnx")
    window.state.record_artifact("parts", {"vision": out / "model.vision.onnx", "text": out / "model.text.onnx"},
                                 entry.name)
    window.select_model("clip")
    window.select_model("clip-onnx")  # the toolbar's model: Package follows with the export folder (parts too)
    package = window.page("package")
    assert package.source_edit.text() == str(out)
    package.source_edit.setText("/my/own.onnx")  # typed by the user: theirs, not overwritten
    window.select_model("clip")
    window.select_model("clip-onnx")
    assert package.source_edit.text() == "/my/own.onnx"


def test_a_problem_click_never_edits_a_form_and_each_failure_is_listed_once(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    from studio.core.errors import Problem

    package = window.page("package")
    package.source_edit.setText("/ws/models/clip-onnx")
    parts = "/ws/models/clip-onnx/model.vision.onnx, /ws/models/clip-onnx/model.text.onnx"
    problem = Problem("error", "rk3588 cannot run IsNaN", source="package", page="package", location=parts,
                      hint="make dims static")
    package.sig_problem.emit(problem)
    window.add_problem(Problem("error", "rk3588 cannot run IsNaN", source="Build bundle", page="package",
                               location=parts))  # the job's own report of the same failure
    assert len(window.log_panel.problems) == 1
    window.go_to_page("export")
    window.open_problem(window.log_panel.problems[0])
    assert window.current_page() is package
    assert package.source_edit.text() == "/ws/models/clip-onnx"  # unchanged
    assert package.error.isVisible() and "IsNaN" in package.error.text()


def test_a_workspace_file_broken_by_hand_keeps_a_backup_and_the_studio_opens(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace.create(tmp_path / "ws")
    model = ws.models_dir / "clip-onnx"
    model.mkdir()
    (model / "model.onnx").write_bytes(b"")
    ws.add_model(model, name="clip-onnx")
    (ws.root / "workspace.json").write_text('{"name": "ws", "models": [')  # edited by hand, cut short
    w = MainWindow(settings=Settings.load(), restore_state=False)
    qtbot.addWidget(w)
    assert w.open_workspace(ws.root) is not None
    backups = list(ws.root.glob("workspace.json.bad-*"))
    assert len(backups) == 1 and backups[0].read_text().startswith('{"name": "ws", "models": [')
    assert [m.name for m in w.workspace.models] == ["clip-onnx"]  # found again in models/
    problem = w.log_panel.problems[-1]
    assert "is not valid JSON" in problem.message and backups[0].name in problem.message
    assert Workspace.open(ws.root).model("clip-onnx") is not None  # the new file is valid
    w.close()


@pytest.mark.slow
def test_an_agent_is_watched_like_a_triton_server(qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Health, models and statistics of a real agent process in the same Devices list as Triton servers."""
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle
    from studio.package.keys import KeyStore
    from tests.edge.helpers import AgentProcess, make_mlp, trust_key, write_token

    trust = trust_key(KeyStore(), "k", "pw", tmp_path / "k.pub")
    token = write_token(tmp_path / "token")
    make_mlp(tmp_path / "m" / "model.onnx")
    bundle = build_bundle(tmp_path / "m", "generic-x86_64", KeyStore().load_signing_key("k", "pw"),
                          tmp_path / "b.tar", name="tiny-mlp", version="1")
    agent = AgentProcess(tmp_path / "agent", trust, token).start()
    try:
        deploy_bundle(Path(bundle.bundle), agent.url, token.read_text().strip())
        window.state.add_device(DeviceEntry("board", agent.url, "agent", extra={"token_file": str(token)}))
        devices = window.page("devices")
        assert devices.server_list.count() == 1 and "(edge agent)" in devices.server_list.item(0).text()
        qtbot.waitUntil(lambda: devices.snapshots.get("board") is not None
                        and devices.snapshots["board"].connected, timeout=30_000)
        snap = devices.snapshots["board"]
        assert [m.name for m in snap.models] == ["tiny-mlp"] and snap.stats is not None
        assert window.state.device_state("board").ok and window.state.device_state("board").models == ("tiny-mlp",)
    finally:
        agent.stop()


def test_test_inference_takes_the_exports_tokenizer_and_processor(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    ws = window.workspace
    out = ws.models_dir / "clip-onnx"
    out.mkdir()
    for f in ("model.onnx", "tokenizer.json", "preprocessor_config.json"):
        (out / f).write_text("{}")
    entry = window.state.add_model(out / "model.onnx", name="clip-onnx", kind="onnx")
    window.state.record_artifact("tokenizer", out, entry.name)
    window.state.record_artifact("processor", out, entry.name)
    devices = window.page("devices")
    assert devices.infer_tokenizer.edit.text() == str(out / "tokenizer.json")
    assert devices.infer_processor.edit.text() == str(out / "preprocessor_config.json")
    # another model: the fields the form filled follow it (CLIP's tokenizer never stays for a Qwen export)
    qwen = ws.models_dir / "qwen-onnx"
    qwen.mkdir()
    for f in ("model.onnx", "tokenizer.json"):
        (qwen / f).write_text("{}")
    entry = window.state.add_model(qwen / "model.onnx", name="qwen-onnx", kind="onnx")
    window.state.record_artifact("tokenizer", qwen, entry.name)
    assert devices.infer_tokenizer.edit.text() == str(qwen / "tokenizer.json")
    assert devices.infer_processor.edit.text() == ""  # it has none: CLIP's is not kept
    # a path the user typed is theirs: choosing CLIP again leaves it alone
    devices.infer_tokenizer.edit.setText("/my/own/tokenizer.json")
    window.select_model("clip-onnx")
    assert devices.infer_tokenizer.edit.text() == "/my/own/tokenizer.json"
    assert devices.infer_processor.edit.text() == str(out / "preprocessor_config.json")


def test_a_server_served_again_on_new_ports_is_followed_and_keeps_its_record(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    devices = window.page("devices")
    first = f"http://127.0.0.1:{free_port()}"
    window.state.add_device(DeviceEntry("local-triton", first, "triton",
                                        extra={"metrics_url": first + "/metrics", "local": True, "pid": 1}))
    assert devices.servers["local-triton"].url == first
    again = f"http://127.0.0.1:{free_port()}"
    window.state.add_device(DeviceEntry("local-triton", again, "triton",
                                        extra={"metrics_url": again + "/metrics", "local": True, "pid": 2}))
    assert devices.servers["local-triton"].url == again  # polled at its new address, not the old one
    devices.open_payload({"url": again, "name": "local-triton"})  # "Open in Devices" from the Triton page
    saved = window.state.device("local-triton")
    assert saved.url == again and saved.extra["pid"] == 2 and saved.extra["local"] is True


def test_another_servers_answer_is_not_left_in_test_inference(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    devices = window.page("devices")
    for name in ("a", "b"):
        window.state.add_device(DeviceEntry(name, f"http://127.0.0.1:{free_port()}", "triton"))
    devices.server_list.setCurrentRow(0)
    devices.infer_out.setPlainText("error: a's answer")
    devices.server_list.setCurrentRow(1)
    assert devices.infer_out.toPlainText() == ""

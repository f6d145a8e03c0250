"""Triton page under real Qt with the real local tritonserver: build a repository from a tiny ONNX model, check it
(clean, then with a broken dim pointing at the file and field), serve it (the server becomes the shared state's
selected device, seen by Devices and Dashboards), open it in Devices, stop it (its entry stays, "stopped"), and
the window's close stopping a server; plus the one-click links between Export, Inspect, Compile, Triton and
Package."""

from __future__ import annotations

import os
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
pytest.importorskip("tritonclient")

from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.settings import Settings  # noqa: E402
from studio.core.workspace import Workspace  # noqa: E402
from studio.export.api import ExportReport  # noqa: E402
from studio.gui.main_window import MainWindow  # noqa: E402
from studio.gui.pages import PAGE_SPECS  # noqa: E402
from studio.gui.pages.triton_page import TritonPage, model_name_for  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from studio.gui.widgets.config_view import find_field_line  # noqa: E402
from tests.gui.gui_helpers import main_window, shown  # noqa: E402
from tests.serving import tiny_models as tm  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.triton, pytest.mark.timeout(300),
              pytest.mark.qt_log_level_fail("WARNING"), pytest.mark.qt_log_ignore("propagateSizeHints")]

SPECS = [("studio.gui.pages.triton_page", "TritonPage"), ("studio.gui.pages.devices_page", "DevicesPage"),
         ("studio.gui.pages.dashboards_page", "DashboardsPage")]


def _window(qtbot, ws: Workspace, specs: list[tuple[str, str]]) -> MainWindow:  # noqa: ANN001
    return main_window(qtbot, ws, specs, 1500, 900)


def _wait_job(qtbot, w: MainWindow, kind: str, timeout: int = 60000) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: any(h.kind == kind for h in w.jobs.handles.values()) and
                    all(h.status != "running" for h in w.jobs.handles.values() if h.kind == kind), timeout=timeout)


def test_page_is_registered_between_compile_and_package() -> None:
    mods = [m for m, _ in PAGE_SPECS]
    assert mods.index("studio.gui.pages.compile_page") < mods.index("studio.gui.pages.triton_page") \
        < mods.index("studio.gui.pages.packaging_page")
    assert model_name_for(Path("/x/tiny-clip-onnx/model.onnx")) == "tiny-clip"
    assert model_name_for(Path("/x/my model.onnx")) == "my_model"


def test_field_lines_of_a_config() -> None:
    text = ('name: "m"\nmax_batch_size: 8\ninput {\n  name: "x"\n  dims: 16\n  dims: 4\n}\n'
            'dynamic_batching {\n  preferred_batch_size: 4\n}\nparameters {\n  key: "routes"\n  value {\n'
            '    string_value: "{}"\n  }\n}\n')
    lines = text.splitlines()
    assert lines[find_field_line(text, "input[0].dims[1]")].strip() == "dims: 4"
    assert lines[find_field_line(text, "max_batch_size")].strip() == "max_batch_size: 8"
    assert lines[find_field_line(text, "dynamic_batching.preferred_batch_size[0]")].strip() == \
        "preferred_batch_size: 4"
    assert lines[find_field_line(text, "parameters.routes.text.model")].strip() == "parameters {"
    assert find_field_line(text, "version folders") is None


def test_build_check_serve_open_in_devices_stop(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:  # noqa: ANN001
    ws = Workspace.create(tmp_path / "ws", name="triton-ws")
    model = tm.mlp(ws.models_dir / "tiny-mlp-onnx" / "model.onnx")
    ws.add_model(model.parent, name="tiny-mlp-onnx", kind="onnx")
    w = _window(qtbot, ws, SPECS)
    page = w.page("triton")
    assert isinstance(page, TritonPage)
    w.go_to_page("triton")

    # the workspace's current model and repository are filled in; the name follows the export folder
    assert page.source_edit.text() == str(model.parent)
    assert page.repo_edit.text() == str(ws.root / "triton-repo")
    assert page.name_edit.text() == "tiny-mlp"
    assert "not in the repository yet" in page.versions_label.text()

    # bad input is shown beside the field, nothing is written
    page.dyn_check.setChecked(True)
    page.preferred_edit.setText("4, eight")
    assert page.build() is None
    assert page.error.isVisible() and page.preferred_edit.property("invalid") is True
    page.preferred_edit.setText("4")
    page.delay_spin.setValue(500)
    page.warmup_check.setChecked(True)
    page.count_spin.setValue(2)

    page.build()
    _wait_job(qtbot, w, "triton:build")
    assert page.build_report is not None, page.error.text()
    repo = ws.root / "triton-repo"
    cfg_file = repo / "tiny-mlp" / "config.pbtxt"
    text = page.config_view.toPlainText()
    assert page.config_view.path == str(cfg_file)
    assert 'name: "tiny-mlp"' in text and 'platform: "onnxruntime_onnx"' in text
    assert "preferred_batch_size: 4" in text and "max_queue_delay_microseconds: 500" in text
    assert "model_warmup" in text and "count: 2" in text
    assert page.config_view.isReadOnly()
    assert {str(repo / "tiny-mlp"), str(repo / "tiny-mlp" / "1"), str(cfg_file),
            str(repo / "tiny-mlp" / "1" / "model.onnx")} <= page.tree_paths()
    assert page.check_report is not None and page.check_report.ok and not page.check_report.errors
    assert page.findings_label.text().startswith("Check: OK: 0 error(s)")
    assert "version(s) 1" in page.versions_label.text()
    page.grab().save(str(artifacts_dir / "triton_page_built.png"))

    # a broken dim: Check names the file and field, and a click marks the line in the config viewer
    good = cfg_file.read_text()
    cfg_file.write_text(good.replace("dims: 16", "dims: 17", 1))
    page.check_btn.click()
    _wait_job(qtbot, w, "triton:check")
    rep = page.check_report
    assert not rep.ok
    bad = [f for f in rep.errors if f.field == "input[0].dims[0]"]
    assert bad and bad[0].file == str(cfg_file) and "17" in bad[0].message and bad[0].hint == "set it to 16"
    row = rep.findings.index(bad[0])
    assert page.findings_table.item(row, 2).text() == "input[0].dims[0]"
    assert page.findings_table.item(row, 1).text() == "tiny-mlp/config.pbtxt"
    assert page.findings_table.item(row, 4).text() == "set it to 16"
    page.show_file(repo / "tiny-mlp" / "1" / "model.onnx")  # somewhere else first
    page.findings_table.selectRow(row)
    assert page.config_view.path == str(cfg_file)
    assert page.current_tree_path() == str(cfg_file)
    line = page.config_view.highlighted_line
    assert line is not None and page.config_view.toPlainText().splitlines()[line].strip() == "dims: 17"
    assert page.config_view.textCursor().blockNumber() == line
    assert "hint: set it to 16" in page.finding_detail.text()
    assert page.findings_label.text().startswith("Check: FAILED")
    page.grab().save(str(artifacts_dir / "triton_page_check_findings.png"))
    # the finding also went to the Problems list; clicking it there comes back to the same finding
    probs = [p for p in w.log_panel.problems if p.page == "triton" and "[input[0].dims[0]]" in (p.location or "")]
    assert probs
    page.findings_table.clearSelection()
    w.open_problem(probs[-1])
    assert page.findings_table.selectionModel().selectedRows()[0].row() == row

    cfg_file.write_text(good)
    page.check()
    _wait_job(qtbot, w, "triton:check")
    assert page.check_report.ok

    # serve locally: the GUI stays responsive, URLs and the log tail show, the model answers
    handle = page.serve()
    assert handle is not None and page.server_state == "starting"
    assert not page.serve_btn.isEnabled() and page.tabs.currentIndex() == 1
    qtbot.waitUntil(lambda: page.server_state in ("running", "failed"), timeout=120000)
    srv = page.server
    assert page.server_state == "running", page.server_note.text() + page.log_view.toPlainText()[-2000:]
    assert page.url_labels["http"].text() == srv.http_url and srv.http_url.startswith("http://127.0.0.1:")
    assert page.url_labels["grpc"].text() == srv.grpc_url and page.url_labels["metrics"].text() == srv.metrics_url
    assert "tiny-mlp" in page.server_note.text() and "Python-backend copy" in page.server_note.text()
    qtbot.waitUntil(lambda: "Started HTTPService" in page.log_view.toPlainText(), timeout=10000)
    with urllib.request.urlopen(f"{srv.http_url}/v2/models/tiny-mlp/ready", timeout=10) as r:  # noqa: S310
        assert r.status == 200
    assert page.devices_btn.isEnabled() and page.stop_btn.isEnabled()
    page.grab().save(str(artifacts_dir / "triton_page_server_running.png"))

    # the served server is the shared state's selected device (saved in the workspace): URL, metrics URL, pid
    state = w.state
    dev = state.device("local-triton")
    assert dev is not None and dev.kind == "triton" and dev.url == srv.http_url
    assert dev.extra["metrics_url"] == srv.metrics_url and state.metrics_url("local-triton") == srv.metrics_url
    assert dev.extra["local"] is True and dev.extra["pid"] == srv.proc.pid
    assert Path(dev.extra["repo"]) == repo.resolve()
    assert state.selected_device is not None and state.selected_device.name == "local-triton"
    qtbot.waitUntil(lambda: state.device_state("local-triton").ok, timeout=20000)
    assert "tiny-mlp" in state.device_state("local-triton").models
    saved = [d for d in Workspace.open(ws.root).devices if d.name == "local-triton"]
    assert [(d.url, d.extra["metrics_url"], d.extra["pid"]) for d in saved] == [(srv.http_url, srv.metrics_url,
                                                                                 srv.proc.pid)]
    # Devices lists it before anyone clicks "Open in Devices"; Dashboards target its URL and metrics URL
    devices, dashboards = w.page("devices"), w.page("dashboards")
    assert devices.servers["local-triton"].url == srv.http_url
    assert devices.servers["local-triton"].metrics_url == srv.metrics_url
    assert dashboards.url_edit.text() == srv.http_url and dashboards.metrics_edit.text() == srv.metrics_url
    # a short load on it: the memory and CPU shown are the tritonserver's (its pid), never the GUI's
    from studio.telemetry import samples as S

    assert state.server_pid(srv.http_url) == srv.proc.pid
    dashboards.model_edit.setText("tiny-mlp")
    dashboards.level_edit.setText("1")
    dashboards.duration.setValue(1.0)
    dashboards.start_runs()
    qtbot.waitUntil(lambda: bool(dashboards.reports), timeout=60_000)
    target = next(iter(dashboards.reports.values())).target
    assert dashboards.store.sources[(target, S.PROC_RSS)] == f"psutil pid {srv.proc.pid}"
    assert srv.proc.pid != os.getpid()

    # open in Devices: the server lands in the workspace's devices and the Devices page shows it
    state.select_device(None)
    page.devices_btn.click()
    assert w.current_page() is devices
    assert state.selected_device is not None and state.selected_device.name == "local-triton"
    assert devices.servers["local-triton"].url == srv.http_url
    assert devices.servers["local-triton"].metrics_url == srv.metrics_url
    assert [d.url for d in ws.devices if d.name == "local-triton"] == [srv.http_url]
    assert devices.current_server() == "local-triton"
    qtbot.waitUntil(lambda: devices.snapshots.get("local-triton") is not None
                    and devices.snapshots["local-triton"].connected, timeout=20000)
    qtbot.waitUntil(lambda: any(devices.models_table.item(r, 0).text() == "tiny-mlp"
                                and devices.models_table.item(r, 2).text() == "READY"
                                for r in range(devices.models_table.rowCount())), timeout=10000)
    devices.open_payload({"url": srv.http_url, "name": "local-triton"})  # again: selected, not duplicated
    assert sum(1 for d in ws.devices if d.name == "local-triton") == 1

    # stop: the device stays in the state (Devices keeps polling it), its state says "stopped"
    seen: list[str] = []  # what the state said at each change (Devices' next poll then reports "refused")
    unsubscribe = state.subscribe("device_state", lambda _t, name: seen.append(state.device_state(name).state)
                                  if name == "local-triton" else None)
    w.go_to_page("triton")
    page.stop_btn.click()
    qtbot.waitUntil(lambda: page.server_state == "stopped", timeout=60000)
    unsubscribe()
    assert srv.proc.poll() is not None
    assert page.url_labels["http"].text() == "-" and page.serve_btn.isEnabled()
    assert "stopped" in seen
    assert state.device("local-triton") is not None and state.device("local-triton").url == srv.http_url
    assert "local-triton" in devices.servers

    # a server still starting (or running) when the window closes is stopped with it
    page.serve()
    second = page.server
    assert second is not srv
    qtbot.wait(300)
    w.close()
    assert second.proc is None or second.proc.poll() is not None
    assert page.server_state == "stopped"


def test_cross_page_links(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:  # noqa: ANN001
    """Export result -> Triton / Package / Compile, Inspect -> Compile / Triton, each with its payload."""
    ws = Workspace.create(tmp_path / "ws", name="links-ws")
    model = tm.mlp(ws.models_dir / "tiny-mlp-onnx" / "model.onnx")
    split = tm.split_export(ws.models_dir / "tiny-clip-onnx")
    tm.mlp(split / "model.onnx")  # a split export keeps the monolithic model beside its parts
    specs = [s for s in PAGE_SPECS if s[0].rsplit(".", 1)[1] in
             ("export_page", "inspect_page", "compile_page", "triton_page", "packaging_page")]
    w = _window(qtbot, ws, specs)
    triton, package, compile_ = w.page("triton"), w.page("package"), w.page("compile")
    assert triton is not None and package is not None and compile_ is not None

    export = w.page("export")
    w.go_to_page("export")
    export.show_report(ExportReport(status="succeeded", model_dir=str(tmp_path / "hf"),
                                    options={"output": str(model)}))
    result = export.result
    assert result.btn_triton.isEnabled() and result.btn_package.isEnabled() and result.btn_compile.isEnabled()
    result.grab().save(str(artifacts_dir / "export_result_links.png"))
    result.btn_triton.click()
    assert w.current_page() is triton
    assert triton.source_edit.text() == str(model) and triton.name_edit.text() == "tiny-mlp"
    assert triton.repo_edit.text() == str(ws.root / "triton-repo")
    w.go_to_page("export")
    result.btn_package.click()
    assert w.current_page() is package and package.source_edit.text() == str(model.parent)
    w.go_to_page("export")
    result.btn_compile.click()
    assert w.current_page() is compile_ and compile_.model_edit.text() == str(model)

    # a split export serves as a folder: parts plus the router
    export.show_report(ExportReport(status="succeeded", options={"output": str(split / "model.onnx")},
                                    parts={"text": {"path": "text_encoder.onnx", "modality": "text"},
                                           "vision": {"path": "vision_encoder.onnx", "modality": "vision"}}))
    result.btn_triton.click()
    assert triton.source_edit.text() == str(split) and triton.name_edit.text() == "tiny-clip"
    assert "split export (text, vision)" in triton.source_info.text()
    assert "BLS router tiny-clip" in triton.source_info.text()

    # a failed export offers none of them
    export.show_report(ExportReport(status="failed", options={"output": str(model)}))
    assert not result.btn_triton.isEnabled() and not result.btn_package.isEnabled()
    assert not result.btn_compile.isEnabled()

    # the inspector: Compile (target mapped to a board / this host) and Serve on Triton
    inspect = w.page("inspect")
    w.open_page("inspect", str(model))
    qtbot.waitUntil(lambda: inspect.model_path is not None and inspect.compile_button.isEnabled(), timeout=30000)
    inspect.set_target("rk3588")
    inspect.compile_button.click()
    assert w.current_page() is compile_
    assert compile_.model_edit.text() == str(model) and compile_.target_combo.currentData() == "rk3588"
    w.go_to_page("inspect")
    inspect.set_target("ort-cpu")
    inspect.compile_button.click()
    assert compile_.target_combo.currentData() == "llvm"
    w.go_to_page("inspect")
    inspect.serve_button.click()
    assert w.current_page() is triton and triton.source_edit.text() == str(model)
    w.go_to_page("inspect")
    w.jobs.wait_all()
    qtbot.wait(200)
    w.grab().save(str(artifacts_dir / "inspect_page_links.png"))


def test_split_export_with_tokenizer_and_version_errors(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """A split export builds parts + router + tokenizer pipeline; an existing version is flagged on its field."""
    from studio.gui.jobs_qt import JobRunner

    apply_theme(QApplication.instance(), "light")
    split = tm.split_export(tmp_path / "tiny-clip-onnx")
    jobs = JobRunner()
    page = shown(qtbot, TritonPage(jobs), 1300, 820)
    page.open_payload({"model": str(split), "repo": str(tmp_path / "repo")})
    assert page.name_edit.text() == "tiny-clip" and "split export (text, vision)" in page.source_info.text()
    page.tokenizer_edit.setText(str(split / "tokenizer.json"))
    page.flavor_combo.setCurrentIndex(page.flavor_combo.findData("python"))
    page.build()
    qtbot.waitUntil(lambda: jobs.handles and all(h.status != "running" for h in jobs.handles.values()),
                    timeout=60000)
    rep = page.build_report
    assert rep is not None, page.error.text()
    assert {m.name for m in rep.models} == {"tiny-clip_text", "tiny-clip_vision", "tiny-clip",
                                             "tiny-clip_text_tokenizer", "tiny-clip_text_pipeline"}
    assert page.check_report.ok, [f.render() for f in page.check_report.findings]
    assert page.config_view.path.endswith("tiny-clip/config.pbtxt") and 'backend: "python"' in \
        page.config_view.toPlainText()
    pipeline = tmp_path / "repo" / "tiny-clip_text_pipeline"
    assert str(pipeline / "config.pbtxt") in page.tree_paths()
    assert page.select_path(pipeline)  # a model folder shows its config
    assert page.current_tree_path() == str(pipeline)
    assert page.config_view.path == str(pipeline / "config.pbtxt")
    assert 'platform: "ensemble"' in page.config_view.toPlainText()

    # version 1 exists: the error sits beside the version field and nothing changes on disk
    page.version_spin.setValue(1)
    page.build()
    qtbot.waitUntil(lambda: all(h.status != "running" for h in jobs.handles.values()), timeout=60000)
    assert page.error.isVisible() and "already exists" in page.error.text()
    assert page.version_spin.property("invalid") is True
    assert sorted(p.name for p in (tmp_path / "repo" / "tiny-clip_text").iterdir() if p.is_dir()) == ["1"]
    page.shutdown()
    jobs.shutdown()


def test_problem_locations_come_back_to_the_page(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """What a failed build names (a flag, a file of the repository) focuses it; it never becomes the model."""
    from studio.gui.jobs_qt import JobRunner

    model = tm.mlp(tmp_path / "mlp.onnx")
    jobs = JobRunner()
    page = TritonPage(jobs)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    page.open_payload(str(model))
    assert page.source_edit.text() == str(model) and page.repo_edit.text() == str(tmp_path / "triton-repo")
    page.name_edit.setText("bad name!")
    page.build()
    qtbot.waitUntil(lambda: jobs.handles and all(h.status != "running" for h in jobs.handles.values()),
                    timeout=30000)
    assert "not a valid Triton model name" in page.error.text() and page.name_edit.property("invalid") is True
    page.open_payload("--name")
    page.open_payload(f"{model}:x")
    assert page.source_edit.text() == str(model)
    page.name_edit.setText("mlp")
    page.build()
    qtbot.waitUntil(lambda: page.build_report is not None, timeout=30000)
    onnx_copy = tmp_path / "triton-repo" / "mlp" / "1" / "model.onnx"
    page.open_payload(str(onnx_copy))
    assert page.current_tree_path() == str(onnx_copy)
    assert page.source_edit.text() == str(model) and "ONNX model" in page.config_view.toPlainText()
    jobs.shutdown()


def test_a_split_export_as_current_model_builds_parts_and_router(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """The toolbar's model is a split export (its model.onnx beside the parts): the page builds from its folder,
    so the repository is text / vision / router, never one monolithic model."""
    import shutil

    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="split")
    split = tm.split_export(ws.root / "models" / "tiny-clip-onnx")
    shutil.copy(split / "text_encoder.onnx", split / "model.onnx")  # the export's monolithic graph beside its parts
    ws.add_model(split / "model.onnx", name="tiny-clip-onnx", kind="onnx", source="export of tiny-clip")
    ws.model("tiny-clip-onnx").artifacts["parts"] = {"text": "models/tiny-clip-onnx/text_encoder.onnx",
                                                     "vision": "models/tiny-clip-onnx/vision_encoder.onnx"}
    ws.save()
    w = MainWindow(ws, settings=Settings.load(), page_specs=[s for s in PAGE_SPECS if "triton" in s[0]],
                   restore_state=False)
    qtbot.addWidget(w)
    page = w.page("triton")
    assert Path(page.source_edit.text()) == split
    assert "split export (text, vision)" in page.source_info.text() and "BLS router" in page.source_info.text()
    w.close()

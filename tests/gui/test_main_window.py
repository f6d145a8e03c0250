"""The main window under real Qt (offscreen): pages, theme, drag-and-drop, window state, broken pages, problems."""

from __future__ import annotations

import argparse
import sys
import textwrap
import threading
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.errors import Problem  # noqa: E402
from studio.core.settings import Settings  # noqa: E402
from studio.core.workspace import Workspace  # noqa: E402
from studio.gui.main_window import BrokenPage, MainWindow, qsettings  # noqa: E402
from studio.gui.theme import current_theme  # noqa: E402
from tests.gui.gui_helpers import main_window, shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]

GOOD_PAGE = textwrap.dedent('''
    from studio.gui.page import Page
    from PySide6.QtWidgets import QLabel, QVBoxLayout

    class GoodPage(Page):
        page_id = "good"
        title = "Good"

        def __init__(self, jobs=None, parent=None):
            super().__init__(jobs, parent)
            QVBoxLayout(self).addWidget(QLabel("a page that works"))
            self.payloads = []
            self.contexts = []

        def context_changed(self):
            self.contexts.append((self.workspace, self.model_name, self.target))

        def open_payload(self, payload):
            self.payloads.append(payload)
''')

BROKEN_PAGE = "import studio_module_that_does_not_exist_anywhere  # noqa\n"


@pytest.fixture
def page_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """A working extra page and a page whose import fails (a module that does not exist is an error:
    tests/gui/test_page_ids.py)."""
    pkg = tmp_path / "extra_pages"
    pkg.mkdir()
    (pkg / "good_page.py").write_text(GOOD_PAGE)
    (pkg / "broken_page.py").write_text(BROKEN_PAGE)
    monkeypatch.syspath_prepend(str(pkg))
    yield [("studio.gui.pages.export_page", "ExportPage"), ("good_page", "GoodPage"),
           ("broken_page", "BrokenPage")]
    for mod in ("good_page", "broken_page"):
        sys.modules.pop(mod, None)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path / "ws", name="test-ws")


@pytest.fixture
def window(qtbot, workspace: Workspace, page_modules):  # noqa: ANN001, ANN201
    w = main_window(qtbot, workspace, page_modules, 1400, 860)
    yield w
    w.jobs.shutdown()


def _tiny_onnx(path: Path) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu0")], "tiny", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _drop(w: MainWindow, paths: list[Path]) -> tuple[bool, bool]:
    md = QMimeData()
    md.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(w.rect().center(), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(w, enter)
    entered = enter.isAccepted()
    drop = QDropEvent(QPointF(w.rect().center()), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    if entered:
        QApplication.sendEvent(w, drop)
    return entered, drop.isAccepted() if entered else False


def test_pages_listed_and_screenshots(window: MainWindow, artifacts_dir: Path) -> None:
    titles = [window.sidebar.item(i).text() for i in range(window.sidebar.count())]
    assert titles[0] == "Export"
    assert titles[1] == "Good"
    assert titles[2].startswith("Broken") and "(error)" in titles[2]
    assert len(titles) == 3
    assert window.page("export") is not None and window.current_page() is window.page("export")
    targets = [window.target_combo.itemData(i) for i in range(window.target_combo.count())]
    for t in ("tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax", "ort-cpu", "hailo-8",
              "mlu370"):
        assert t in targets
    assert window.target_combo.currentData() == "ort-cpu"
    window.grab().save(str(artifacts_dir / "main_window_light.png"))
    window.toggle_theme()
    assert current_theme() == "dark"
    window.grab().save(str(artifacts_dir / "main_window_dark.png"))


def test_theme_toggle_applies_qss_and_persists(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    app = QApplication.instance()
    light_sheet = app.styleSheet()
    assert "QListWidget#sidebar" in light_sheet and "@THEMES@" not in light_sheet
    qtbot.keyClick(window, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert current_theme() == "dark"
    assert app.styleSheet() != light_sheet
    assert Settings.load().theme == "dark"
    assert window.theme_actions["dark"].isChecked()
    window.toggle_theme()
    assert current_theme() == "light" and Settings.load().theme == "light"


def test_drop_onnx_file_adds_and_selects_it(window: MainWindow, workspace: Workspace, tmp_path: Path) -> None:
    onnx_file = _tiny_onnx(tmp_path / "relu.onnx")
    good = window.page("good")
    entered, dropped = _drop(window, [onnx_file])
    assert entered and dropped
    assert workspace.model("relu") is not None and workspace.model("relu").kind == "onnx"
    assert workspace.current_model == "relu"
    assert window.model_combo.currentData() == "relu"
    assert Workspace.open(workspace.root).model("relu") is not None  # saved to workspace.json
    assert good.contexts[-1][1] == "relu"
    assert "relu" in window.status_model.text()
    # something that is neither a folder nor an .onnx file is refused at drag-enter
    txt = tmp_path / "notes.txt"
    txt.write_text("x")
    assert _drop(window, [txt]) == (False, False)
    # a folder that is not a model is accepted by the drag but reported as a problem, not added
    empty = tmp_path / "empty-folder"
    empty.mkdir()
    before = len(window.log_panel.problems)
    _drop(window, [empty])
    assert len(window.log_panel.problems) == before + 1
    assert "config.json" in window.log_panel.problems[-1].message


def test_drop_model_folder(window: MainWindow, workspace: Workspace, tmp_path: Path) -> None:
    folder = tmp_path / "exported"
    folder.mkdir()
    _tiny_onnx(folder / "model.onnx")
    _drop(window, [folder])
    assert workspace.model("exported") is not None and workspace.model("exported").kind == "onnx"


def test_window_state_roundtrip(qtbot, workspace: Workspace, page_modules) -> None:  # noqa: ANN001
    w1 = MainWindow(workspace, page_specs=page_modules, restore_state=True)
    qtbot.addWidget(w1)
    w1.show()
    w1.resize(1234, 700)
    w1.go_to_page("good")
    w1.log_dock.hide()
    qtbot.wait(10)
    saved = (w1.width(), w1.height())
    assert saved != (1400, 860)
    w1.close()
    assert qsettings().value("window/page") == "good"
    w2 = MainWindow(workspace, page_specs=page_modules, restore_state=True)
    qtbot.addWidget(w2)
    avail = QApplication.primaryScreen().availableGeometry()
    assert w2.height() == saved[1]  # the offscreen screen is 800x800: restoreGeometry clamps the width to it
    assert w2.width() == saved[0] if avail.width() >= saved[0] else w2.width() <= avail.width()
    assert qsettings().value("window/geometry") is not None
    assert w2.current_page() is w2.page("good")
    assert w2.log_dock.isHidden()
    w2.close()


def test_broken_page_shows_its_error(window: MainWindow, artifacts_dir: Path) -> None:
    idx = next(i for i, lp in enumerate(window.pages) if lp.module == "broken_page")
    window.go_to_index(idx)
    broken = window.current_widget()
    assert isinstance(broken, BrokenPage)
    assert "studio_module_that_does_not_exist_anywhere" in broken.text.toPlainText()
    assert any("Broken page failed to load" in p.message for p in window.log_panel.problems)
    window.grab().save(str(artifacts_dir / "main_window_broken_page.png"))


def test_problem_click_opens_page_at_location(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    good = window.page("good")
    window.add_problem(Problem("error", "Gather is not supported on this target", source="inspect",
                               page="good", location="/encoder/Gather_7"))
    item = window.log_panel.tree.topLevelItem(0)
    assert window.log_panel.tabText(1) == "Problems (2)"  # this one and the broken page
    window.log_panel.tree.itemClicked.emit(item, 0)
    assert window.current_page() is good
    assert good.payloads[-1] == "/encoder/Gather_7"
    # a page asking for another page: sig_open_page
    window.go_to_page("export")
    good.sig_open_page.emit("good", "model.onnx")
    assert window.current_page() is good and good.payloads[-1] == "model.onnx"
    # a page that is not installed is reported, not a crash
    assert window.open_page("inspect", "x.onnx") is False


def test_context_propagates_to_pages(window: MainWindow, workspace: Workspace, tmp_path: Path) -> None:
    _tiny_onnx(tmp_path / "a.onnx")
    _tiny_onnx(tmp_path / "b.onnx")
    window.add_model_paths([tmp_path / "a.onnx", tmp_path / "b.onnx"])
    good = window.page("good")
    window.select_model("a")
    assert good.contexts[-1][1] == "a" and workspace.current_model == "a"
    window.select_target("rk3588")
    assert good.contexts[-1][2] == "rk3588"
    assert Workspace.open(workspace.root).current_target == "rk3588"


def test_shortcuts_and_search(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.current_page() is window.page("good")
    qtbot.keyClick(window, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert window.current_page() is window.page("export")
    assert window.run_search("Good")
    assert window.current_page() is window.page("good")
    assert window.run_search("Target: tensorrt") and window.target_combo.currentData() == "tensorrt"
    assert not window.run_search("no-such-thing")
    dlg = window.show_shortcuts()
    assert dlg.table.rowCount() >= 6
    dlg.close()


def test_escape_cancels_current_page_job(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    window.go_to_page("good")
    started = threading.Event()

    def endless(job):  # noqa: ANN001, ANN202
        started.set()
        while True:
            job.check_cancelled()
            threading.Event().wait(0.01)

    h = window.jobs.start("good", "endless job", endless)
    other = window.jobs.start("export", "another page's job", endless)
    started.wait(5)
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: h.status == "cancelled", timeout=5000)
    assert other.status == "running"  # Esc cancels only the current page's job
    row = window.jobs_panel.rows[h.id]
    assert row.state.text() == "cancelled"
    window.jobs.cancel(other.id)
    qtbot.waitUntil(lambda: other.status == "cancelled", timeout=5000)


def test_close_cancels_and_waits_for_jobs(qtbot, workspace: Workspace, page_modules) -> None:  # noqa: ANN001
    w = MainWindow(workspace, page_specs=page_modules, restore_state=False)
    qtbot.addWidget(w)
    finished = threading.Event()

    def slow(job):  # noqa: ANN001, ANN202
        try:
            while True:
                job.check_cancelled()
                threading.Event().wait(0.01)
        finally:
            finished.set()

    w.jobs.start("good", "slow", slow)
    w.close()
    assert finished.is_set()  # the worker stopped before close returned
    assert w.jobs.threads_alive() == 0


def test_failed_job_becomes_a_problem_and_report_opens(window: MainWindow, qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from studio.core.errors import InputError

    def bad(job):  # noqa: ANN001, ANN202
        raise InputError("model folder /nope does not exist", offending="/nope", hint="check the path")

    h = window.jobs.start("good", "bad job", bad)
    qtbot.waitUntil(lambda: h.status == "failed", timeout=5000)
    p = window.log_panel.problems[-1]
    assert p.message.startswith("model folder /nope") and p.page == "good" and p.location == "/nope"
    assert "bad job: failed" in window.status_job.text()
    report = tmp_path / "r.json"
    report.write_text('{"status": "succeeded"}')
    h2 = window.jobs.start("good", "job with report", lambda job: {"report_path": str(report)})
    qtbot.waitUntil(lambda: h2.status == "done", timeout=5000)
    row = window.jobs_panel.rows[h2.id]
    assert row.report_btn.isVisibleTo(row) and row.report == report
    with qtbot.waitSignal(window.jobs_panel.sig_open_report):
        row.report_btn.click()
    window.jobs_panel.clear_finished()
    assert not window.jobs_panel.rows


def test_plugins_dialog_lists_plugins(window: MainWindow) -> None:
    dlg = window.show_plugins()
    names = [dlg.table.item(r, 0).text() for r in range(dlg.table.rowCount())]
    assert "builtin-targets" in names
    dlg.close()


def test_workspace_open_errors_and_recent(window: MainWindow, tmp_path: Path) -> None:
    assert window.open_workspace(tmp_path / "not-a-workspace") is None
    assert "not a studio workspace" in window.log_panel.problems[-1].message
    other = Workspace.create(tmp_path / "other")
    window.open_workspace(other.root)
    assert window.workspace.root == other.root
    recent = Settings.load().recent_workspaces
    assert str(other.root) == recent[0] and len(recent) >= 2
    assert window.ws_combo.currentData() == str(other.root)
    assert window.recent_menu.actions()[0].text() == str(other.root)


def test_app_opens_workspace_flag_and_reopens_last(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    from studio.gui.app import build_window

    target = tmp_path / "fresh-ws"
    w = build_window(argparse.Namespace(demo=None, workspace=str(target), theme="light"))
    qtbot.addWidget(w)
    assert (target / "workspace.json").is_file() and w.workspace.root == target.resolve()
    w.close()
    w2 = build_window(argparse.Namespace(demo=None, workspace=None, theme=None))
    qtbot.addWidget(w2)
    assert w2.workspace is not None and w2.workspace.root == target.resolve()
    w2.close()


def test_cli_gui_help_is_light() -> None:
    import subprocess

    code = ("import sys; from studio.cli.main import main\n"
            "try:\n    main(['gui', '--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'PySide6' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "--demo" in proc.stdout and "--workspace" in proc.stdout


@pytest.mark.export
@pytest.mark.slow
def test_demo_flag_opens_at_once_and_fills_workspace_as_a_job(qtbot, tmp_path: Path,  # noqa: ANN001
                                                               artifacts_dir: Path) -> None:
    pytest.importorskip("torch")
    from studio.export.demo import DEMO_SAMPLES
    from studio.gui.app import build_window

    demo = tmp_path / "demo"
    w = shown(qtbot, build_window(argparse.Namespace(demo=str(demo), workspace=None, theme="light")), 1400, 860,
              exposed=False)
    assert w.workspace is not None and w.workspace.root == demo.resolve()  # the window is usable at once
    handle = next(h for h in w.jobs.handles.values() if h.kind == "demo")
    assert handle.id in w.jobs_panel.rows
    qtbot.waitUntil(lambda: handle.status != "running", timeout=600_000)
    assert handle.status == "done", handle.error
    models = [w.model_combo.itemData(i) for i in range(w.model_combo.count())]
    assert set(DEMO_SAMPLES) <= set(models)
    assert w.model_combo.currentData() == "tiny-clip"
    w.grab().save(str(artifacts_dir / "main_window_demo.png"))
    w.close()


def test_a_long_job_title_elides_in_the_status_bar(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    """A job's title as long as "verifiers for these targets: ..." never clips the status bar at 1366 px: the
    label elides it and keeps the whole title as its tooltip (a clean-clone run under load caught the clip)."""
    from tests.gui.screen_checks import clipped_controls

    window.resize(1366, 740)
    title = "verifiers for these targets: " + ", ".join(f"target-{i}" for i in range(20))
    window.status.show_job(title)
    qtbot.wait(50)
    assert window.status_job.toolTip().endswith(title)
    assert not [c for c in clipped_controls(window) if "last job" in c], clipped_controls(window)
    assert window.status_job.width() < window.status_job.fontMetrics().horizontalAdvance(window.status_job.text())


def test_a_short_job_title_is_drawn_whole_in_the_themed_status_bar(window: MainWindow, qtbot) -> None:  # noqa: ANN001
    """With room to spare a job title is never elided: the label asks for its text plus the theme's QSS padding
    (``QStatusBar QLabel { padding: 0 10px }`` elided "Preparing demo workspace: done" at 1400 px on a real
    display when only the text's advance was asked for)."""
    window.status.show_job("Preparing demo workspace: done")
    qtbot.wait(50)
    label = window.status_job
    need = label.fontMetrics().horizontalAdvance(label.full_text())
    assert label.contentsRect().width() >= need, (label.contentsRect().width(), need, label.width())

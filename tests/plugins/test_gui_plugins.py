"""The GUI side (real Qt, offscreen): the Plugins dialog lists the example plugin's contributions and the broken
plugin's errors; the example page joins the sidebar through the registry, the broken one is a stand-in page."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from studio.core import plugins  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.qt_log_level_fail("WARNING"),
              pytest.mark.qt_log_ignore("propagateSizeHints")]


@pytest.fixture
def installed(example_site: Path, broken_site: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Both outside plugins visible to this process; afterwards the registry and sys.modules as before."""
    monkeypatch.syspath_prepend(str(example_site))
    monkeypatch.syspath_prepend(str(broken_site))
    plugins.discover(refresh=True)
    yield
    monkeypatch.undo()
    for mod in [m for m in sys.modules if m.split(".")[0] in ("studio_example", "studio_broken_example")]:
        sys.modules.pop(mod, None)
    plugins.discover(refresh=True)


def test_dialog_shows_contributions_and_errors(qtbot, installed, artifacts_dir: Path) -> None:  # noqa: ANN001
    from studio.gui.dialogs import PluginsDialog  # the old import path still works

    dlg = PluginsDialog()
    qtbot.addWidget(dlg)
    names = [dlg.table.item(r, 0).text() for r in range(dlg.table.rowCount())]
    assert {"builtin-targets", "tvm-compile", "studio-example", "broken-example", "broken-manifest"} <= set(names)
    assert dlg.state_text("studio-example", "verifiers", "example-npu") == "available: "
    assert dlg.state_text("studio-example", "cli", "example-hello").startswith("available: say what the example")
    assert dlg.state_text("studio-example", "targets", "example-npu") == "available: "
    assert dlg.state_text("studio-example", "pages", "example") == "available: Example NPU"
    # the manifest that fails to import: error in the table and, selected first, in the details pane
    assert "vendor SDK 'libexample_npu' is not installed" in dlg.state_text("broken-manifest")
    assert dlg.rows[dlg.table.currentRow()].plugin.name == "broken-manifest"
    assert "bad_manifest.py" in dlg.details.toPlainText()  # the traceback, not just the message

    dlg.check_button.click()  # imports every contribution now
    assert dlg.state_text("studio-example", "verifiers", "example-npu") == "loaded: "
    assert dlg.state_text("studio-example", "pages", "example").startswith("loaded")
    state = dlg.state_text("broken-example", "verifiers", "broken-npu")
    assert state.startswith("error: ImportError") and "libexample_npu.so" in state
    assert dlg.state_text("broken-example").startswith("error: ImportError")
    dlg.resize(1000, 560)
    dlg.show()
    qtbot.waitExposed(dlg)
    dlg.grab().save(str(artifacts_dir / "plugins_dialog.png"))


def test_plugin_pages_join_the_window(qtbot, installed, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:  # noqa: ANN001
    from studio.core.settings import Settings
    from studio.core.workspace import Workspace
    from studio.gui import pages
    from studio.gui.main_window import BrokenPage, MainWindow

    # one built-in page keeps the window small; tvm-compile declares that same page, so it is not added twice
    monkeypatch.setattr(pages, "PAGE_SPECS", [("studio.gui.pages.compile_page", "CompilePage")])
    w = MainWindow(Workspace.create(tmp_path / "ws"), settings=Settings.load(), restore_state=False)
    qtbot.addWidget(w)
    by_title = {p.title: p for p in w.pages}
    assert [p.title for p in w.pages].count("Compile") == 1
    ex = by_title["Example NPU"]
    assert ex.ok and ex.plugin == "studio-example" and type(ex.page).__name__ == "ExamplePage"
    broken = by_title["Broken NPU"]
    assert not broken.ok and broken.plugin == "broken-example" and "libexample_npu.so" in broken.error
    sidebar = [w.sidebar.item(i).text() for i in range(w.sidebar.count())]
    assert any("Example NPU" in t for t in sidebar) and any("Broken NPU" in t for t in sidebar)
    assert [b.loaded.title for b in w.findChildren(BrokenPage)] == ["Broken NPU"]
    dlg = w.show_plugins()
    assert dlg.state_text("studio-example", "pages", "example") == "loaded: Example NPU"
    assert dlg.state_text("broken-example", "pages", "broken").startswith("error: ImportError")
    dlg.close()

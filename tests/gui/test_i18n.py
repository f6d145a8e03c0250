"""The GUI's translations under real Qt (offscreen): the zh_CN catalogue is complete and builds, the window and
its pages draw Chinese with the translator installed (nothing clipped at 1366x768), View > Language switches back
to English without a restart, and a broken .qm or an unknown language code falls back to English with a message."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")


from studio.core.workspace import Workspace  # noqa: E402
from studio.gui import i18n  # noqa: E402
from tests.gui.gui_helpers import main_window  # noqa: E402

pytestmark = [pytest.mark.gui]

TS = i18n.TRANSLATIONS_DIR / "studio_zh_CN.ts"
CJK = re.compile(r"[\u4e00-\u9fff]")
SIZE = (1366, 768)


@pytest.fixture
def english():  # type: ignore[no-untyped-def]
    """Whatever a test installs, the next one starts in English."""
    yield
    i18n.translator().apply(i18n.ENGLISH)


@pytest.fixture
def zh(english):  # type: ignore[no-untyped-def]
    assert i18n.translator().apply("zh_CN") is None
    return "zh_CN"


def test_catalogue_is_complete_and_builds(tmp_path: Path) -> None:
    root = ET.parse(TS).getroot()
    messages = list(root.iter("message"))
    assert len(messages) > 50
    unfinished = [m.findtext("source") for m in messages
                  if m.find("translation").get("type") == "unfinished" or not (m.findtext("translation") or "")]
    assert not unfinished, f"{len(unfinished)} untranslated: {unfinished[:10]}"
    for m in messages:  # every placeholder of the source is in the translation, none invented
        src, tr = m.findtext("source") or "", m.findtext("translation") or ""
        assert sorted(re.findall(r"\{[^{}]*\}", src)) == sorted(re.findall(r"\{[^{}]*\}", tr)), (src, tr)
    qm = tmp_path / "studio_zh_CN.qm"
    assert i18n.build_qm(TS, qm) is None
    assert qm.stat().st_size > 1000


def test_resolve_language_from_setting_env_and_locale() -> None:
    assert i18n.resolve("system", {"LANG": "zh_CN.UTF-8"}).code == "zh_CN"
    assert i18n.resolve("system", {"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}).code == "en"
    assert i18n.resolve("system", {"LANG": "fr_FR.UTF-8"}) == i18n.Choice("en", "locale")  # unsupported: quietly
    assert i18n.resolve("zh_CN", {"LANG": "C"}).code == "zh_CN"  # the saved choice wins
    assert i18n.resolve("system", {"STUDIO_LANGUAGE": "zh-CN", "LANG": "C"}).code == "zh_CN"
    bad = i18n.resolve("system", {"STUDIO_LANGUAGE": "klingon"})
    assert bad.code == "en" and "unknown language 'klingon'" in (bad.warning or "")


def test_unknown_saved_language_gives_english_and_a_message(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    choice = i18n.install("xx_YY")
    assert choice.code == "en" and i18n.current() == "en"
    assert "unknown language 'xx_YY'" in (choice.warning or "") and "zh_CN" in choice.warning
    w = main_window(qtbot, None, [("studio.gui.pages.export_page", "ExportPage")], *SIZE)
    w.apply_start_language(choice)
    assert "unknown language" in w.status_msg.text()
    assert "unknown language" in w.log_panel.log.toPlainText()
    assert w.sidebar.item(0).text() == "Export"


def test_broken_qm_gives_english_and_a_message(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "translations"
    folder.mkdir()
    (folder / "studio_zh_CN.qm").write_bytes(b"this is not a qm file\x00\x01")
    message = i18n.translator().apply("zh_CN", folder)
    assert message is not None and "cannot be read" in message and "make translations" in message
    assert i18n.current() == "en"
    (folder / "studio_zh_CN.qm").unlink()  # and a missing one (no .ts beside it to build from)
    message = i18n.translator().apply("zh_CN", folder)
    assert message is not None and "is missing" in message and i18n.current() == "en"


def test_menu_switches_language_live_and_back(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    ws = Workspace.create(tmp_path / "ws", name="ws")
    w = main_window(qtbot, ws, None, *SIZE)
    assert w.sidebar.item(0).text() == "Export"
    assert w.set_language("zh_CN")
    assert i18n.saved_language(w.settings) == "zh_CN"
    assert w.sidebar.item(0).text() == "导出"
    assert w.menuBar().actions()[0].text() == "文件(&F)"
    assert w.jobs_dock.windowTitle() == "任务"
    assert CJK.search(w.toolbar.labels[0].text())
    assert w.language_actions["zh_CN"].isChecked()
    assert w.set_language("en")
    assert w.sidebar.item(0).text() == "Export"
    assert w.menuBar().actions()[0].text() == "&File"
    assert w.toolbar.labels[0].text() == "Workspace"
    assert w.jobs_dock.windowTitle() == "Jobs"
    assert not w.set_language("klingon")
    assert "unknown language" in w.status_msg.text() and i18n.current() == "en"


def test_chinese_interface_font_is_the_simplified_chinese_family(qtbot, zh) -> None:  # type: ignore[no-untyped-def]
    """Han characters in their Chinese forms: Noto Sans CJK SC before the application's family (fontconfig alone
    may pick the Japanese variant); back in English the font is what it was."""
    from PySide6.QtGui import QFontDatabase
    from PySide6.QtWidgets import QApplication

    sc = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    if not sc:
        pytest.skip("no Simplified Chinese font installed (apt-get install fonts-noto-cjk)")
    fams = QApplication.font().families()
    assert len(fams) >= 2 and fams[0] in sc and "JP" not in fams[0], fams
    i18n.translator().apply(i18n.ENGLISH)
    assert QApplication.font().families()[1:] == [], QApplication.font().families()

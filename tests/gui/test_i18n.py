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


from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget  # noqa: E402

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
    assert "页面: 导出" in w.toolbar.search_model.stringList()  # the search finds pages by their Chinese titles
    assert w.run_search("页面: 对比") and w.current_widget() is w.page("diff")
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


# each page's heading in Chinese and in English (the page is identified by it)
HEADINGS = {"export": ("导出为 ONNX", "Export to ONNX"), "inspect": ("检查器", "Inspector"), "diff": ("对比", "Diff"),
            "compile": ("为开发板编译", "Compile for a board"), "triton": ("在 Triton 上部署", "Serve on Triton"),
            "package": ("为边缘开发板打包", "Package for an edge board"), "devices": ("设备", "Devices"),
            "fleet": ("设备群 — ", "Fleet — "), "dashboards": ("仪表板 — ", "Dashboards — ")}


def _texts(root: QWidget) -> list[tuple[QWidget, str]]:
    """The visible labels' and buttons' texts under ``root`` (rich text stripped)."""
    out = []
    for w in root.findChildren(QWidget):
        if isinstance(w, (QLabel, QAbstractButton)) and w.isVisibleTo(root.window()) and w.text():
            out.append((w, re.sub(r"<[^>]+>", "", w.text())))
    return out


def _clipped(root: QWidget) -> list[str]:
    """Labels and buttons narrower than their text (word-wrapped and elided labels excepted)."""
    from studio.gui.widgets.flow import ElidedLabel

    bad = []
    for w, text in _texts(root):
        if isinstance(w, QLabel) and (w.wordWrap() or isinstance(w, ElidedLabel)):
            continue
        if w.width() > 0 and w.sizeHint().width() > w.width() + 1:
            bad.append(f"{type(w).__name__} {text[:50]!r}: needs {w.sizeHint().width()} px, has {w.width()}")
    return bad


def _demo_window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    from studio.gui.screenshot import wait_idle

    w = main_window(qtbot, None, None, *SIZE)
    w.start_demo(tmp_path / "demo")
    assert wait_idle(w, 300)
    return w, wait_idle


def test_every_page_in_chinese_at_1366x768_then_english_again(qtbot, tmp_path: Path, artifacts_dir: Path,  # type: ignore[no-untyped-def]
                                                               english) -> None:
    """Each page drawn in zh_CN: its heading and most of its labels Chinese, nothing clipped, no character without
    a font (boxes); a screenshot of each. Then View > Language > English: the same pages in English again."""
    from studio.gui.fonts import uncovered

    assert i18n.translator().apply("zh_CN") is None
    w, wait_idle = _demo_window(qtbot, tmp_path)
    assert w.sidebar.item(0).text() == "导出"
    shots = artifacts_dir / "i18n"
    shots.mkdir(exist_ok=True)
    have_cjk_font = not uncovered(["中文"])
    for lp in w.pages:
        assert lp.ok, lp.error
        w.go_to_page(lp.page_id)
        wait_idle(w, 60)
        page = w.current_widget()
        texts = [t for _w, t in _texts(page)]
        zh, _en = HEADINGS[lp.page_id]
        assert any(t.startswith(zh) for t in texts), (lp.page_id, texts[:20])
        chinese = [t for t in texts if CJK.search(t)]
        assert len(chinese) >= 3, (lp.page_id, texts)
        assert not _clipped(page), (lp.page_id, _clipped(page))
        if have_cjk_font:
            assert uncovered(texts) == [], (lp.page_id, uncovered(texts))
        w.grab().save(str(shots / f"zh_CN-{lp.page_id}.png"))
    assert not _clipped(w.toolbar) and not _clipped(w.jobs_panel) and not _clipped(w.log_panel)

    assert w.set_language("en")  # live: the pages are built again in English
    for lp in w.pages:
        w.go_to_page(lp.page_id)
        wait_idle(w, 60)
        texts = [t for _w, t in _texts(w.current_widget())]
        assert any(t.startswith(HEADINGS[lp.page_id][1]) for t in texts), (lp.page_id, texts[:20])
        assert not [t for t in texts if CJK.search(t)], (lp.page_id, [t for t in texts if CJK.search(t)])
    assert w.jobs_dock.windowTitle() == "Jobs" and w.sidebar.item(0).text() == "Export"


def test_switch_while_a_job_runs_waits_and_says_restart(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    """A running job's page would be cut off by rebuilding it: the choice is saved, nothing is switched (no half
    English, half Chinese window) and the status bar says to restart; once the job ends the switch applies."""
    import threading

    ws = Workspace.create(tmp_path / "ws", name="ws")
    w = main_window(qtbot, ws, None, *SIZE)
    release = threading.Event()
    handle = w.jobs.start("test:wait", "waiting job", lambda job: release.wait(30))
    assert not w.set_language("zh_CN")
    assert i18n.current() == "en" and i18n.saved_language(w.settings) == "zh_CN"
    assert "restart to apply" in w.status_msg.text()
    assert w.sidebar.item(0).text() == "Export" and w.menuBar().actions()[0].text() == "&File"
    release.set()
    qtbot.waitUntil(lambda: handle.status != "running", timeout=30_000)
    assert w.set_language("zh_CN") and w.sidebar.item(0).text() == "导出"


# phrases the inspector's rich-text panels used to write in English whatever the language (built into f-strings
# before they reached Qt): each must be in the English rendering (so the list stays meaningful) and gone in zh_CN
PANEL_PHRASES = ("Operators (", "tensors have dynamic dims", "origin(s)", "(weight)", "Verdict per target",
                 "Parity against the original", "input cases", "min cosine", "dynamic origins", "Resolved",
                 "dynamic from:", "Profiled time", "kernel call", "per run", "runs after", "warm-up", "Run time",
                 "Node time", "By scope", "before ms", "Parity inputs", "counted as 1")


def test_inspector_panels_have_no_english_phrase_in_chinese(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    """Node details, statistics, dynamic dims, a fix's before/after (with its parity) and the profile panel,
    from a real inspection, parity check and ONNX Runtime profile of a tiny model, drawn in English and then in
    zh_CN: none of the phrases above is left in the Chinese text, and the numbers and ids are kept."""
    import onnx
    from inspect_page_models import vision_model_with_problems
    from PySide6.QtGui import QTextDocument

    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.inspector import details, profile_format
    from studio.gui.inspector.profile_panel import ProfilePanel
    from studio.inspect.api import inspect_model
    from studio.optimize.api import analysis_diff, check_parity
    from studio.profiling.ort import profile_model
    from studio.profiling.report import compare_profiles

    plain = vision_model_with_problems(tmp_path / "plain.onnx", custom_op=False)
    custom = vision_model_with_problems(tmp_path / "custom.onnx")
    rep, rep_custom = inspect_model(plain), inspect_model(custom)
    graph = graph_from_onnx(onnx.load(plain))
    conv = next(n for n in graph.nodes if n.name == "conv1")
    target = next(iter(rep.targets))
    parity = check_parity(plain, plain, cases=1)
    parity.dims, parity.dims_source = {"height": 16}, "height=16 from --static"  # as fix_model records them
    prof = profile_model(plain, shapes={"pixel_values": [1, 3, 16, 16]}, runs=2, warmup=1)
    measured = next(n for n in prof.nodes if n.mean_ms > 0)
    panel = ProfilePanel()
    qtbot.addWidget(panel)

    def render() -> str:
        html = (details.node_details_html(graph, conv, rep, target)
                + details.stats_html(rep.stats, graph, rep) + details.dynamic_html(rep)
                + details.changes_html("custom → plain", analysis_diff(rep_custom, rep), parity=parity)
                + profile_format.node_time_html(measured, prof)
                + profile_format.comparison_html(compare_profiles(prof, prof)))
        panel.set_report(prof)
        doc = QTextDocument()
        doc.setHtml(html + "<p>" + panel.summary.text() + "</p>")
        return doc.toPlainText()

    english = render()
    assert [p for p in PANEL_PHRASES if p not in english] == []
    assert i18n.translator().apply("zh_CN") is None
    chinese = render()
    assert [p for p in PANEL_PHRASES if p in chinese] == []
    assert "算子" in chinese and "一致性" in chinese and "性能分析耗时" in chinese
    assert "conv1" in chinese and target in chinese and f"{rep.stats.nodes:,}" in chinese


def test_core_job_status_and_log_lines_in_chinese(qtbot, tmp_path: Path, zh) -> None:  # type: ignore[no-untyped-def]
    """A real core job (ONNX Runtime profiling of a tiny model) says its status and log lines in English
    (studio.core.jobs); the Jobs panel card and the Log panel show them in Chinese with the values kept, through
    the core's catalogue; in English the same job's lines are shown as the core said them."""
    import onnx
    from onnx import TensorProto, helper

    from studio.core.jobs import ToolLine
    from studio.gui.jobs_panel import job_status_word
    from studio.profiling.ort import profile_model

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu0")], "tiny", [x], [y])
    model = tmp_path / "tiny-relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
    w = main_window(qtbot, None, [("studio.gui.pages.export_page", "ExportPage")], *SIZE)

    def run() -> tuple[str, str, str]:
        h = w.jobs.start("test:profile", "profile", lambda job: profile_model(model, runs=3, warmup=1, job=job))
        qtbot.waitUntil(lambda: h.status != "running", timeout=60_000)
        assert h.status == "done", h.error
        return w.jobs_panel.rows[h.id].status.text(), w.log_panel.log.toPlainText(), h.state.status

    card, log, said = run()
    assert card == "已在 3 次运行中分析 1 个节点", card  # "profiled 1 nodes over 3 runs", its figures kept
    assert "正在开启性能分析加载 tiny-relu.onnx" in log  # "loading tiny-relu.onnx with profiling on": the file kept
    assert "运行 4/4" in log and said == "profiled 1 nodes over 3 runs"  # the core's own record stays English
    assert CJK.search(w.status_job.text()) and "profile" in w.status_job.text()  # the status bar's last job line
    assert job_status_word("succeeded") == "成功"  # an export's or compile's report status on that line
    h = w.jobs.start("test:relay", "relay", lambda job: (job.log(ToolLine("writing tiny-relu.onnx")),
                                                         job.log("writing tiny-relu.onnx")))
    qtbot.waitUntil(lambda: h.status != "running", timeout=30_000)
    assert h.log == ["writing tiny-relu.onnx", "正在写入 tiny-relu.onnx"]  # a tool's own line stays as it came
    assert i18n.translator().apply(i18n.ENGLISH) is None
    card, log, _said = run()
    assert card == "profiled 1 nodes over 3 runs"
    assert "[profile] profiled 1 nodes over 3 runs\n" in log and "[profile] loading tiny-relu.onnx with profiling on" in log
    w.jobs.shutdown()


def test_a_core_error_in_the_problems_panel_in_chinese(qtbot, tmp_path: Path, zh) -> None:  # type: ignore[no-untyped-def]
    """A core error (an f-string message, translated through its template) reads Chinese in the Problems panel and
    the status bar's flash, with the path kept; the Problem itself keeps the core's English (de-duplication)."""
    from studio.core.errors import InputError

    w = main_window(qtbot, None, [("studio.gui.pages.export_page", "ExportPage")], *SIZE)
    try:
        missing = tmp_path / "nowhere"
        w.report_error(InputError(f"model folder {missing} does not exist", offending=str(missing),
                                  hint="check the path"), source="export")
        item = w.log_panel.tree.topLevelItem(0)
        assert CJK.search(item.text(0)) and str(missing) in item.text(0), item.text(0)
        assert w.log_panel.problems[-1].message == f"model folder {missing} does not exist"
        assert CJK.search(w.status.msg.full_text())
    finally:
        w.jobs.shutdown()


def test_a_core_hint_names_the_gui_control_in_chinese(qtbot, english) -> None:  # type: ignore[no-untyped-def]
    """A core hint shown in the GUI (studio.gui.hints) reads Chinese with the control named in Chinese (Qt's
    "Hints" context), not its CLI flag nor the English control name; English again after switching back."""
    from studio.gui.hints import gui_hint
    from studio.gui.widgets.field_error import FieldError

    class CompileLike(QWidget):
        page_id = "compile"  # FieldError names the controls of the page it sits on

    page = CompileLike()
    qtbot.addWidget(page)
    error = FieldError(page)
    english_hint = gui_hint("package it again with --board rk3588")
    assert english_hint == "package it again with the Package page's “Board”"
    assert i18n.translator().apply("zh_CN") is None
    assert gui_hint("package it again with --board rk3588") == "请用“打包”页面的“开发板”重新打包"
    assert gui_hint("use --static batch=1,sequence=64") == "请使用检查器的“静态维度…”修复"
    error.show_error("输出文件夹已存在", hint="choose another --out, or pass --force to replace it")
    text = error.text()
    assert "“输出”字段" in text and "“替换已有的输出文件夹”" in text, text
    assert not re.search(r"--|[A-Za-z]{3,}", text), text  # no flag, no English word
    assert i18n.translator().apply(i18n.ENGLISH) is None
    assert gui_hint("package it again with --board rk3588") == english_hint


def test_verify_panel_notes_and_errors_in_chinese(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    """The Inspector's Verify panel after a real ONNX Runtime verification of a model whose custom op fails the
    session: the verifier's notes, its source line and the verdict words in zh_CN (the core's catalogue), the
    panel's own words Qt's; the verifier, node and op names kept; English again after switching back."""
    from inspect_page_models import vision_model_with_problems

    from studio.gui.inspector.verify_panel import VerifyPanel
    from studio.inspect.api import inspect_model
    from studio.verify.registry import all_verifiers
    from studio.verify.run import verify_report

    model = vision_model_with_problems(tmp_path / "custom.onnx")
    rep = inspect_model(model, targets=["ort-cpu"])
    verify_report(rep, model, shapes={"pixel_values": [1, 3, 16, 16]},
                  entries=[e for e in all_verifiers() if e.target == "ort-cpu"])
    panel = VerifyPanel()
    qtbot.addWidget(panel)

    def shown() -> str:
        panel.show_verification(rep.verification, rep)
        rows = []
        for i in range(panel.tree.topLevelItemCount()):
            top = panel.tree.topLevelItem(i)
            rows += [" | ".join(top.text(c) for c in range(4))]
            rows += [" | ".join(top.child(j).text(c) for c in range(4)) for j in range(top.childCount())]
        return panel.sources_label.text() + "\n" + panel.status_label.text() + "\n" + "\n".join(rows)

    english_text = shown()
    assert "note: session failed; each node was then built alone in a one-node session" in english_text
    assert i18n.translator().apply("zh_CN") is None
    chinese = shown()
    assert "会话创建失败；随后每个节点都在单节点会话中单独构建" in chinese, chinese
    assert "session failed" not in chinese and "note:" not in chinese and "unsupported" not in chinese, chinese
    assert "ort-cpu" in chinese and "onnxruntime" in chinese
    i18n.translator().apply(i18n.ENGLISH)
    assert shown() == english_text


def test_findings_table_in_chinese(qtbot, tmp_path: Path, english) -> None:  # type: ignore[no-untyped-def]
    """The Inspector's findings table on a real inspection: severity, the core rules' messages and hints in zh_CN
    (Qt's words for the table, the core's catalogue for the findings); node and op names, flags kept."""
    from inspect_page_models import vision_model_with_problems
    from PySide6.QtCore import Qt

    from studio.gui.inspector.findings import COLUMNS, FindingsModel
    from studio.inspect.api import inspect_model

    rep = inspect_model(vision_model_with_problems(tmp_path / "m.onnx"), targets=["rk3588"])
    model = FindingsModel()

    def cells() -> list[list[str]]:
        model.set_findings(rep.findings)
        return [[model.data(model.index(r, c), Qt.ItemDataRole.DisplayRole) or "" for c in range(len(COLUMNS))]
                for r in range(model.rowCount())]

    english_rows = cells()
    assert any(row[0] == "● error" for row in english_rows)
    assert any(row[5] == "NonZero: Rockchip RK3588 NPU (rknn-toolkit2 2.5.0) does not support NonZero"
               for row in english_rows)
    assert i18n.translator().apply("zh_CN") is None
    rows = cells()
    assert {row[0] for row in rows} <= {"● 错误", "▲ 警告", "○ 提示"}, rows
    nz = next(row for row in rows if row[3] == "nonzero")
    assert nz[5] == "NonZero: Rockchip RK3588 NPU (rknn-toolkit2 2.5.0) 不支持 NonZero", nz
    assert nz[6] == "用支持的算子替换它，或让这一部分在主机上运行（切分图）"
    policy = next(row for row in rows if row[1] == "全部")
    assert policy[5] == "1 个节点位于未声明的域 'com.example'（允许的域：ai.onnx）" and "--custom-domain com.example" in policy[6]
    assert any(row[3] == "张量 active_idx" for row in rows)
    i18n.translator().apply(i18n.ENGLISH)
    assert cells() == english_rows

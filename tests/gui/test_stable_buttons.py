"""Compile's and Package's buttons stay where they are when a description above them changes (real Qt offscreen):
every compile target and backend, every board, at the page's share of a 1366x768 screen."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from studio.gui.pages.compile_page import CompilePage
from studio.gui.pages.packaging_page import PackagingPage
from studio.gui.screen_fit import PageScroller
from tests.gui.gui_helpers import shown

pytestmark = pytest.mark.gui

PAGE_AREA = (840, 600)  # the page beside the sidebar and the docks at 1366x768


def _where(page: Any, *buttons: Any) -> tuple[tuple[int, int], ...]:
    for _ in range(3):  # the layout settles (a column's minimum height follows its wrapped text on resize)
        QApplication.processEvents()
        page.layout().activate()
    out = []
    for b in buttons:
        p = b.mapTo(page, QPoint(0, 0))
        out.append((p.x(), p.y()))
    return tuple(out)


def test_compile_buttons_do_not_move_with_the_target_description(qtbot, artifacts_dir) -> None:  # type: ignore[no-untyped-def]
    page = CompilePage()
    scroller = shown(qtbot, PageScroller(page), *PAGE_AREA)  # noqa: F841  (kept: it owns the page)
    texts, places = set(), set()
    for b in range(page.backend_combo.count()):
        page.backend_combo.setCurrentIndex(b)
        for t in range(page.target_combo.count()):
            page.target_combo.setCurrentIndex(t)
            texts.add(page.target_info.text())
            places.add(_where(page, page.compile_btn, page.cancel_btn, page.package_btn))
    fm, width = page.target_info.fontMetrics(), page.target_info.width()
    heights = {fm.boundingRect(0, 0, width, 10_000, Qt.TextFlag.TextWordWrap, x).height() for x in texts}
    assert len(texts) > 3 and len(heights) > 1  # the descriptions really differ in length
    assert len(places) == 1, places
    page.grab().save(str(artifacts_dir / "compile_stable_buttons.png"))


def test_package_buttons_do_not_move_with_the_board_or_source_description(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    page = PackagingPage()
    scroller = shown(qtbot, PageScroller(page), *PAGE_AREA)  # noqa: F841  (kept: it owns the page)
    (tmp_path / "compiled").mkdir()
    places = set()
    for source in ("", str(tmp_path / "model.onnx"), str(tmp_path / "compiled")):
        page.source_edit.setText(source)
        for i in range(page.board_combo.count()):
            page.board_combo.setCurrentIndex(i)
            places.add(_where(page, page.build_btn, page.deploy_btn, page.open_bundle_btn))
    assert page.board_combo.count() > 3
    assert len(places) == 1, places

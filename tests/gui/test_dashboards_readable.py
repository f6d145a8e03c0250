"""Dashboards read at 1366x768 (real Qt offscreen, a real edge agent under a real load): one axis per unit,
legends in the title rows (never over the data), plots tall enough to read in the page's share of the screen, the
wheel scrolling the page unless the plots were clicked or Ctrl is held, the SLA verdict with its budget and the
measure that broke it, and sources-table values formatted to fit (units, ms, no exponent cut off)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("pyqtgraph")

from PySide6.QtCore import QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.gui.dashboards.plots import PLOT_H, PLOTS  # noqa: E402
from studio.gui.dashboards.runs import sla_lines  # noqa: E402
from studio.gui.dashboards.values import format_measure  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.dashboards_page import DashboardsPage  # noqa: E402
from studio.gui.screen_fit import PageScroller  # noqa: E402
from studio.telemetry import samples as S  # noqa: E402
from tests.edge.helpers import PASSPHRASE, AgentProcess, deploy_tiny, dev_keys  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240), pytest.mark.qt_log_ignore("propagateSizeHints")]

PAGE_AREA = (840, 600)  # what a 1366x768 window leaves the page beside the sidebar and the Jobs / Log docks


@pytest.fixture(autouse=True)
def _collect_the_page_here():  # type: ignore[no-untyped-def]
    """pyqtgraph items are reference cycles: collect them on the GUI thread (see test_dashboards_page.py)."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentProcess]:
    """A real studio-agent on loopback serving model "tiny" from a bundle signed and deployed here."""
    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    dev = dev_keys(tmp_path)
    a = AgentProcess(tmp_path / "agent-data", dev.trust, dev.token).start()
    deploy_tiny(a, dev, tmp_path)
    yield a
    a.stop()


def _wheel(widget, at: QPoint, modifiers=Qt.KeyboardModifier.NoModifier) -> None:  # type: ignore[no-untyped-def]
    """One notch of the wheel (down) at ``at`` in ``widget``, delivered as Qt delivers it (with propagation)."""
    ev = QWheelEvent(QPointF(at), QPointF(widget.mapToGlobal(at)), QPoint(0, 0), QPoint(0, -120),
                     Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, ev)


def test_a_live_run_reads_in_the_page_share_of_a_1366x768_screen(qtbot, agent: AgentProcess,
                                                                  artifacts_dir: Path) -> None:
    jobs = JobRunner()
    page = DashboardsPage(jobs)
    scroller = shown(qtbot, PageScroller(page), *PAGE_AREA)
    page.url_edit.setText(agent.url)
    page.model_edit.setText("tiny")
    page.metrics_edit.setText(agent.url + "/metrics")
    page.level_edit.setText("1,2")
    page.duration.setValue(2.0)
    page.tier.setCurrentText("L1")
    page.p99.setValue(0.01)  # a budget no window meets: the verdict must say that p99 broke it
    page.start_runs()
    qtbot.waitUntil(lambda: bool(page.reports), timeout=90_000)
    qtbot.wait(400)  # the timer's last redraws
    rep = next(iter(page.reports.values()))
    grid = page.grid

    # one unit per axis: every curve of a plot is in the plot's unit, and that unit is its axis label
    drawn = {k: n for k, n in page.plotted_series().items() if n > 0}
    assert drawn
    for pid, _title, unit, _series in PLOTS:
        units = {S.UNITS[s] for (p, _t, s) in drawn if p == pid}
        assert units <= {unit}, (pid, units)
        assert unit in page.plots[pid].getAxis("left").labelText
    assert ("throughput", S.THROUGHPUT) in {(p, s) for p, _t, s in drawn}
    assert not any(p == "throughput" and s == S.OUTPUT_TPS for p, _t, s in drawn)  # tok/s has a plot of its own
    # the throughput axis is scaled to its own req/s, not flattened against another unit's numbers
    (_x, (y0, y1)) = page.plots["throughput"].getViewBox().viewRange()
    top = max(float(c.getData()[1].max()) for (p, _t, _s), c in grid._curves.items() if p == "throughput")
    assert top >= 0.4 * y1, (top, y1)

    # legends outside the data: no legend item over any plot; every curve is named in its plot's title row
    for pid, plot in page.plots.items():
        assert plot.legend is None, pid
    for (pid, _t, _s), curve in grid._curves.items():
        assert curve.name() in grid.title_text(pid)

    # tall enough to read: each plot with data has PLOT_H rows of which 120+ px are data; the others fold to a
    # title row that says why (the agent has no power sensor here)
    for pid, plot in page.plots.items():
        if grid.folded[pid]:
            assert "not available" in grid.title_text(pid) or "no data" in grid.title_text(pid), pid
        else:
            assert plot.getViewBox().height() >= 120, (pid, plot.getViewBox().height())
    assert grid.folded["power"] and not grid.folded["latency"] and not grid.folded["throughput"]
    assert page.plots["latency"].height() >= PLOT_H - 1

    # the SLA verdict: its budget and which measure broke which budget, in the page
    verdict = page.verdict_label.text()
    assert rep.sla is not None and rep.sla.verdict == "fail"
    head, budget, why, _rest = sla_lines(rep.sla, rep.verdicts)
    assert "latency p99" in why and "> 0.01 ms" in why and "windows" in why
    assert "latency p99 ≤ 0.01 ms" in budget and "errors ≤ 0.1 %" in budget
    assert f"SLA L1 fail: {rep.sla.passed} of {rep.sla.judged}" in head
    for part in (head, why, budget):
        assert part.replace(">", "&gt;") in verdict

    # table values fit their cells: units, no exponent, never elided
    table = page.sources_table
    fm = table.fontMetrics()
    values = [table.item(r, 1).text() for r in range(table.rowCount())]
    assert values and not any("e+" in v or "e-" in v for v in values), values
    for r, v in enumerate(values):
        assert fm.horizontalAdvance(v) <= table.columnWidth(1), (v, table.columnWidth(1))
        assert fm.horizontalAdvance(table.item(r, 0).text()) <= table.columnWidth(0)
    latest = dict(zip((table.item(r, 0).text() for r in range(table.rowCount())), values, strict=True))
    assert latest[S.THROUGHPUT].endswith("req/s") and latest[S.LAT_P99].endswith("ms")
    scroller.grab().save(str(artifacts_dir / "dashboards_readable_top.png"))

    # the wheel over the plots scrolls the page; the plots keep their range
    bar = scroller.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(0)
    vb = page.plots["latency"].getViewBox()
    qtbot.waitUntil(lambda: not page.running(), timeout=30_000)
    page.set_paused(True)  # no redraw moves the ranges while the wheel is tested
    before = vb.viewRange()
    at = page.glw.mapFromScene(vb.sceneBoundingRect().center())  # the middle of the latency plot
    _wheel(page.glw.viewport(), at)
    assert bar.value() > 0, "the wheel over a plot did not scroll the page"
    assert vb.viewRange() == before
    scrolled = bar.value()
    # Ctrl + wheel zooms the plot under the pointer, the page stays
    _wheel(page.glw.viewport(), at, Qt.KeyboardModifier.ControlModifier)
    assert vb.viewRange() != before and bar.value() == scrolled
    # a click gives the plots focus: the wheel zooms there too
    zoomed = vb.viewRange()
    page.glw.setFocus(Qt.FocusReason.MouseFocusReason)
    qtbot.waitUntil(page.glw.hasFocus, timeout=5000)
    _wheel(page.glw.viewport(), at)
    assert vb.viewRange() != zoomed and bar.value() == scrolled
    scroller.grab().save(str(artifacts_dir / "dashboards_readable_scrolled.png"))
    page.shutdown()
    jobs.shutdown()


def test_values_are_formatted_to_fit() -> None:
    assert format_measure(5.422e6, "B/s") == "5.42 MB/s"
    assert format_measure(87.7512, "req/s") == "87.8 req/s"
    assert format_measure(1234.5, "us") == "1.23 ms"  # times in ms
    assert format_measure(3.3e9, "B") == "3.07 GiB"
    assert format_measure(None, "W") == "not available"
    assert format_measure(0.1, "%") == "0.1 %"
    assert format_measure(2.0, "") == "2"

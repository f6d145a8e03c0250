"""Dashboards page (real Qt offscreen): a short live load against a real KServe v2 server, screenshot,
SLA shading, exports, replay of the recording."""

from __future__ import annotations

import csv
import gc
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pyqtgraph")

from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.dashboards_page import MAX_SHADES, DashboardsPage  # noqa: E402
from studio.telemetry import samples as S  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.timeout(180)]


@pytest.fixture(autouse=True)
def _collect_the_page_here():  # type: ignore[no-untyped-def]
    """The closed page's pyqtgraph items are reference cycles: collected later, on whichever thread the garbage
    collector happens to run (a job's worker), their destructors touch GUI-thread timers and Qt warns "Timers
    cannot be started from another thread" in the next test. Delete and collect them here, on the GUI thread."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def test_live_load_screenshot_export_and_replay(qtbot, kserve_proc, artifacts_dir: Path,
                                                tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = JobRunner()
    page = shown(qtbot, DashboardsPage(jobs), 1400, 900, exposed=False)
    assert page.page_id == "dashboards"
    page.url_edit.setText(kserve_proc.url)
    page.model_edit.setText("mlp")
    page.level_edit.setText("1,2")
    page.duration.setValue(2.0)
    page.tier.setCurrentText("L1")
    page.p99.setValue(0.6)  # tight enough that some windows fail and get shaded
    page.record_box.setChecked(True)
    rec = tmp_path / "live.sqlite"
    page.record_edit.setText(str(rec))
    page.start_runs()
    assert page.stop_btn.isEnabled()
    qtbot.waitUntil(lambda: bool(page.reports), timeout=60_000)
    qtbot.wait(300)  # a few more timer redraws
    rep = next(iter(page.reports.values()))
    assert [lv.label for lv in rep.levels] == ["concurrency=1", "concurrency=2"]
    assert rep.sla is not None and rep.sla.judged > 0
    assert page.frames > 5
    # latency and throughput curves are drawn; power is "not available" here (no GPU, no NVML), not zero
    plotted = page.plotted_series()
    drawn = {(pid, series) for (pid, _t, series), points in plotted.items() if points > 0}
    assert ("latency", S.LAT_P99) in drawn and ("throughput", S.THROUGHPUT) in drawn
    assert page.na_text["power"].toPlainText().startswith("not available")
    assert not any(pid == "power" for (pid, _t, _s) in plotted)
    assert page.thresholds["p99"].isVisible() and page.thresholds["p99"].value() == pytest.approx(0.6)
    if rep.sla.passed < rep.sla.judged:  # failing windows are shaded, one band each
        fails = sum(v.verdict == "fail" for v in rep.verdicts)
        assert len(page.shaded_windows()) == min(fails, MAX_SHADES) > 0
    assert "SLA L1" in page.verdict_label.text()
    assert page.sources_table.rowCount() > 5
    shot = artifacts_dir / "dashboards_page_live.png"
    page.grab().save(str(shot))
    assert shot.stat().st_size > 10_000
    # exports
    png = page.export_png(tmp_path / "plots.png")
    assert png.stat().st_size > 5_000
    rows = list(csv.reader(open(page.export_csv(tmp_path / "data.csv"), encoding="utf-8")))
    assert rows[0] == ["t", "target", "series", "value", "unit", "source"]
    assert any(r[2] == S.LAT_P99 for r in rows[1:])
    # pause freezes redraw, the live buffers keep their data
    page.set_paused(True)
    frames = page.frames
    qtbot.wait(350)
    assert page.frames == frames
    page.set_paused(False)
    # replay the recording through the same buffers
    assert rec.is_file()
    page.replay(rec)
    qtbot.waitUntil(lambda: not page.running(), timeout=30_000)
    qtbot.wait(300)
    assert page.store.version((rep.target, S.LAT_P99)) > 0
    assert any(points > 0 for points in page.plotted_series().values())
    page.grab().save(str(artifacts_dir / "dashboards_page_replay.png"))
    # the window's close path: shutdown() stops a running load and the redraw timer
    page.start_runs()
    assert page.running()
    page.shutdown()
    qtbot.waitUntil(lambda: not page.running(), timeout=30_000)
    assert not page.timer.isActive()
    jobs.shutdown()


def test_bad_target_is_reported_in_place(qtbot) -> None:  # type: ignore[no-untyped-def]
    page = DashboardsPage(JobRunner())
    qtbot.addWidget(page)
    problems = []
    page.sig_problem.connect(problems.append)
    page.model_edit.setText("")
    page.start_runs()
    assert problems and problems[0].location == "Model"
    page.model_edit.setText("m")
    page.level_edit.setText("one,two")
    page.start_runs()
    assert problems[-1].location == "Levels / rate"
    assert not page.running()

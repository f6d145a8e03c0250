"""The Qt-free page ids (shell completion of `studio gui --page`) are the built window's, in sidebar order."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.page_ids import builtin_page_ids, page_ids  # noqa: E402
from studio.gui.pages import load_pages  # noqa: E402

pytestmark = [pytest.mark.gui]


def test_page_ids_without_qt_match_the_loaded_pages(qtbot) -> None:  # noqa: ANN001
    jobs = JobRunner()
    try:
        loaded = load_pages(jobs)
        ids = [lp.page_id for lp in loaded]
        assert page_ids() == ids
        assert builtin_page_ids() == [lp.page_id for lp in loaded if lp.plugin is None]
        assert "package" in ids  # packaging_page.py's own id, not its module name
    finally:
        for lp in loaded:
            if lp.page is not None:
                lp.page.shutdown()
                lp.page.deleteLater()
        jobs.shutdown()

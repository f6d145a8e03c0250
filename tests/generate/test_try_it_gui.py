"""The export result's "Try it" (real Qt offscreen) on the folder's tiny Qwen2 export: the answer streamed into
the panel equals `studio generate` on the same export, with TTFT and tokens/s; bad input in place; hidden for
exports that cannot generate."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from studio.generate.api import generate  # noqa: E402
from studio.gui.export_wizard.result_step import ResultStep  # noqa: E402
from studio.gui.jobs_qt import JobRunner  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.timeout(120)]


def test_try_it_streams_the_answer_of_the_exported_parts(qtbot, exported, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    folder, report = exported
    step = shown(qtbot, ResultStep(), 1200, 900, exposed=False)
    step.try_it.jobs = JobRunner()
    step.show_report(report)
    panel = step.try_it
    assert panel.isVisible() and panel.kind == "decoder-only" and not panel.media_row.isVisible()
    panel.prompt_edit.setText("hello world")
    panel.max_tokens.setValue(12)
    pieces: list[str] = []
    panel.sig_piece.connect(pieces.append)
    panel.run()
    qtbot.waitUntil(lambda: panel.result is not None, timeout=60_000)
    want = generate(folder, "hello world", max_new_tokens=12)
    assert panel.result.token_ids == want.token_ids
    assert panel.answer.toPlainText() == want.text and len(pieces) > 1  # streamed piece by piece
    assert "TTFT" in panel.stats.text() and "tokens/s" in panel.stats.text()
    step.grab().save(str(artifacts_dir / "export_try_it.png"))
    # bad input: an empty prompt is named in place with the panel's own field name
    panel.prompt_edit.setText("")
    panel.result = None
    panel.run()
    qtbot.waitUntil(lambda: panel.field_error.isVisible(), timeout=30_000)
    assert "prompt" in panel.field_error.text().lower() and "--prompt" not in panel.field_error.text()
    assert panel.run_btn.isEnabled()


def test_try_it_is_hidden_for_an_export_that_cannot_generate(qtbot, exported, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _folder, report = exported
    step = shown(qtbot, ResultStep(), 1200, 900, exposed=False)
    plain = tmp_path / "plain" / "model.onnx"
    plain.parent.mkdir()
    plain.write_bytes(b"")
    step.try_it.set_export(plain)
    assert not step.try_it.isVisible()
    step.try_it.set_export(None)
    assert not step.try_it.isVisible()

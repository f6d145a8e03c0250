"""The GUI's shape fields read studio.core.shapes: an old spelling is accepted and told in place under the field,
a bad spec is an InputError naming the field (Compile page "Shapes", Inspector Verify tab "Static shapes")."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.gui.jobs_qt import JobRunner
from studio.gui.pages.compile_page import CompilePage
from studio.gui.pages.inspect_page import InspectPage

pytestmark = pytest.mark.gui


def test_compile_page_shapes_field(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    jobs = JobRunner()
    page = CompilePage(jobs)
    qtbot.addWidget(page)
    page.model_edit.setText(str(tmp_path / "m.onnx"))
    page.shapes_edit.setText("x:2,3; ids=1x16")
    assert page.options().shapes == {"x": [2, 3], "ids": [1, 16]}
    assert not page.shapes_note.isHidden()
    assert page.shapes_note.text() == ("warning: Shapes 'x:2,3' is an old spelling; write x=2,3\n"
                                       "warning: Shapes 'ids=1x16' is an old spelling; write ids=1,16")
    page.shapes_edit.setText("x=2,0")
    with pytest.raises(InputError) as ei:  # a compile needs data: sizes >= 1
        page.options()
    assert ei.value.message.startswith("Shapes 'x=2,0': axis 1 of input 'x' is 0")
    assert page.shapes_note.isHidden()
    page.shapes_edit.setText("x=2,3 ids=1,16")
    assert page.options().shapes == {"x": [2, 3], "ids": [1, 16]} and page.shapes_note.isHidden()
    jobs.shutdown()


def test_verify_tab_static_shapes_field(qtbot) -> None:  # type: ignore[no-untyped-def]
    page = InspectPage()
    qtbot.addWidget(page)
    panel, verifier = page.side.verify_panel, page.verifier
    panel.shapes_edit.setText("pixel_values=[1,3,32,32]")
    assert verifier.shapes() == {"pixel_values": [1, 3, 32, 32]}
    assert not panel.shapes_error.isHidden() and panel.shapes_error.property("role") == "warn"
    assert panel.shapes_error.text() == ("warning: Static shapes 'pixel_values=[1,3,32,32]' is an old spelling; "
                                         "write pixel_values=1,3,32,32")
    panel.shapes_edit.setText("pixel_values=1,-3,32,32")
    with pytest.raises(InputError) as ei:
        verifier.shapes()
    assert ei.value.details == {"field": "Static shapes", "input": "pixel_values", "axis": 1}
    panel.shapes_edit.setText("")
    assert verifier.shapes() is None
    page.jobs.shutdown()

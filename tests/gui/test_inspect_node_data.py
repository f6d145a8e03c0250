"""Model Explorer node data from the inspector (real Qt offscreen): export the overlays, colour the graph by a
file of verdicts or of numbers, and a corrupted file answered in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_page_models import vision_model_with_problems

from studio.gui.graph import palette
from studio.gui.pages.inspect_page import InspectPage
from tests.gui.gui_helpers import shown

pytestmark = pytest.mark.gui


def test_export_then_colour_by_node_data(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model = vision_model_with_problems(tmp_path / "head.onnx")
    page = shown(qtbot, InspectPage(), 1400, 900, exposed=False)
    try:
        page.open_model(model)
        qtbot.waitUntil(lambda: page.report is not None and page.view.ready, timeout=60_000)
        out = tmp_path / "nd.json"
        page.node_data.export(out)
        qtbot.waitUntil(lambda: len(sorted(tmp_path.glob("nd.*.json"))) == len(page.report.targets), timeout=30_000)
        files = sorted(tmp_path.glob("nd.*.json"))
        assert {f.stem.split(".", 1)[1] for f in files} == set(page.report.targets)

        # a verdicts file colours the nodes as verdicts
        page.node_data.load(tmp_path / "nd.rk3588.json")
        qtbot.waitUntil(lambda: page.node_data.last_overlay is not None, timeout=30_000)
        verdicts = page.report.node_verdicts["rk3588"]
        name, verdict = next((k, v) for k, v in verdicts.items() if v == "unsupported")
        idx = page.view.graph.index_of(name)
        assert page.view.gscene.verdict_index[idx] == palette.VERDICT_INDEX[verdict]

        # numbers colour by heat, the file's name on the legend
        nums = tmp_path / "num.json"
        key = next(iter(verdicts))
        nums.write_text(json.dumps({"name": "my metric", "results": {key: {"value": 3.5}}}))
        page.node_data.last_overlay = None
        page.node_data.load(nums)
        qtbot.waitUntil(lambda: page.node_data.last_overlay is not None, timeout=30_000)
        assert page.toolbar.mode() == "heat" and "my metric" in page.toolbar.color_mode.currentText()

        # a corrupted file: the error in place, naming the file
        bad = tmp_path / "bad.json"
        bad.write_text("{not json")
        page.node_data.load(bad)
        qtbot.waitUntil(lambda: page.error_label.isVisible() and "bad.json" in page.error_label.text(),
                        timeout=30_000)
    finally:
        page.jobs.shutdown()

"""The node details' verdict table holds its target ids and verdict chips on one line each in Chinese, in the
panel's width at 1366x768: Qt's rich text ignores ``<td nowrap>`` and CJK text may break between any two
characters, so a narrow column drew "支" over "持" and "openvin" over "o" (seen on a real display)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from studio.gui import i18n


@pytest.fixture
def zh():  # type: ignore[no-untyped-def]
    assert i18n.translator().apply("zh_CN") is None
    yield "zh_CN"
    i18n.translator().apply(i18n.ENGLISH)


def _model(path: Path) -> Path:
    """A cubic Resize (unsupported on rk3588, with the profile's reason) after a Conv, at a dynamic batch."""
    x = helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [helper.make_node("Conv", ["pixel_values", "w"], ["c"], name="conv0"),
             helper.make_node("Resize", ["c", "", "scales"], ["y"], mode="cubic", name="resize0")]
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits),
                                opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_verdict_table_cells_stay_on_one_line(qtbot, zh, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QTextBrowser

    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.inspector.details import node_details_html
    from studio.inspect.api import inspect_model

    path = _model(tmp_path / "m.onnx")
    graph = graph_from_onnx(onnx.load(str(path)))
    report = inspect_model(path, None)
    node = next(n for n in graph.nodes if n.name == "resize0")
    view = QTextBrowser()
    qtbot.addWidget(view)
    view.resize(190, 600)  # the details panel's viewport at 1366x768
    view.setHtml(node_details_html(graph, node, report, "ort-cpu"))
    view.show()
    doc = view.document()
    doc.documentLayout().documentSize()
    cells: dict[str, int] = {}
    block = doc.begin()
    while block.isValid():
        text = block.text().strip("\xa0 ")
        if text in report.node_verdicts or text in ("支持", "不支持", "有风险", "未知"):
            cells[text] = max(cells.get(text, 0), block.layout().lineCount())
        block = block.next()
    assert {"openvino", "ascend-310p", "rk3588", "支持", "不支持"} <= set(cells), cells
    assert all(n == 1 for n in cells.values()), cells


def test_dynamic_origins_in_chinese(qtbot, zh, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The Dynamic dims tab and a tensor's origin line say the core's description in the user's language."""
    from studio.gui.graph.model import graph_from_onnx
    from studio.gui.inspector.details import dynamic_html, node_details_html
    from studio.inspect.api import inspect_model

    path = _model(tmp_path / "m.onnx")
    report = inspect_model(path, None)
    graph = graph_from_onnx(onnx.load(str(path)))
    node = next(n for n in graph.nodes if n.name == "resize0")
    for html in (dynamic_html(report), node_details_html(graph, node, report, "ort-cpu")):
        assert "图输入 &#x27;pixel_values&#x27; 的第 0 轴是符号维度" in html, html
        assert "is symbolic" not in html

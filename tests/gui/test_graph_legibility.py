"""The graph reads at Fit (real Qt offscreen, real ONNX models): every text the view draws is at least
LEGIBLE_PX device pixels at any zoom (measured on the painter the view really paints with), the top level of a
model with a KV cache's many inputs fills the view with them in one box, an opened group's ops are named after
Fit, and names in other scripts get a font that has their glyphs (or a note saying what to install)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter, QPixmap

from studio.gui.graph.hierarchy import IO_PREFIX
from studio.gui.graph.labels import place
from studio.gui.graph.lod import FIT_MAX, LEGIBLE_PX, LOD_LABEL, LOD_OVERVIEW
from studio.gui.graph.model import KIND_GROUP, KIND_OP, graph_from_onnx
from studio.gui.graph.view import GraphView
from tests.gui.gui_helpers import shown

pytestmark = pytest.mark.gui

SIZES = {"1366x768": (900, 500), "1920x1080": (1480, 820)}  # the graph's share of the window at each size


class TextRecorder(QPainter):
    """A QPainter that notes every drawText with the device pixel size of its font (the scene's items get
    this very object in their paint(): PySide hands back the Python wrapper), and every label-layer chip: a
    pixmap of text at a known pixel size, drawn at the painter's scale."""

    def __init__(self, device: QImage, layer: Any = None) -> None:
        super().__init__(device)
        self.texts: list[tuple[str, float]] = []
        self.layer = layer

    def _note(self, text: str) -> None:
        f = self.font()
        px = f.pixelSize() if f.pixelSize() > 0 else f.pointSizeF() * 96 / 72
        self.texts.append((text, px * abs(self.worldTransform().m11())))

    def drawText(self, *args: Any) -> Any:  # noqa: N802
        self._note(next((a for a in args if isinstance(a, str)), ""))
        return super().drawText(*args)

    def drawPixmap(self, *args: Any) -> Any:  # noqa: N802
        pm = next((a for a in args if isinstance(a, QPixmap)), None)
        chip = self.layer.chip_text(pm.cacheKey()) if pm is not None and self.layer is not None else None
        if chip is not None:
            self.texts.append((chip[0], chip[1] * abs(self.worldTransform().m11())))
        return super().drawPixmap(*args)


def drawn_texts(view: GraphView) -> list[tuple[str, float]]:
    """What the view draws now: (text, device pixel size) of every label."""
    img = QImage(view.viewport().size(), QImage.Format.Format_ARGB32)
    img.fill(0)
    rec = TextRecorder(img, view.gscene.labels if view.gscene is not None else None)
    view.render(rec, QRectF(img.rect()), view.viewport().rect())
    rec.end()
    return [(t, px) for t, px in rec.texts if t.strip()]


def kv_model(path: Path, layers: int = 12) -> Path:
    """The synthetic CLIP-text transformer with a decoder's KV cache: past_key_values.N.key/value inputs read
    in each layer, present.N.key/value outputs (4 x ``layers`` graph I/O, as an exported decoder has)."""
    from studio.inspect.synthetic import transformer_model

    m = transformer_model(layers=layers, hidden=32, heads=2, vocab=50, max_pos=16)
    g = m.graph
    for i in range(layers):
        for kv in ("key", "value"):
            name = f"past_key_values.{i}.{kv}"
            g.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", 2, "past", 16]))
            g.node.append(helper.make_node("Identity", [name], [f"present.{i}.{kv}"], name=f"layers.{i}/cache_{kv}"))
            g.output.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT,
                                                          ["batch", 2, "past", 16]))
    onnx.save(m, str(path))
    return path


@pytest.fixture(scope="module")
def decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return kv_model(tmp_path_factory.mktemp("legible") / "decoder.onnx")


def _view(qtbot: Any, path: Path, size: tuple[int, int]) -> GraphView:
    view = shown(qtbot, GraphView(theme="light"), *size)
    view.set_graph(graph_from_onnx(onnx.shape_inference.infer_shapes(onnx.load(str(path)))))
    qtbot.waitUntil(lambda: view.ready, timeout=30_000)
    return view


def _relaid(qtbot: Any, view: GraphView, action: Any) -> None:
    with qtbot.waitSignal(view.sig_layout_ready, timeout=30_000):
        assert action()


@pytest.mark.parametrize("screen", list(SIZES))
def test_fit_fills_the_view_with_the_top_level_and_every_name_reads(qtbot, decoder: Path, screen: str,
                                                                      artifacts_dir: Path) -> None:
    view = _view(qtbot, decoder, SIZES[screen])
    view.fit_all()
    drawn = view.graph
    assert drawn is not None
    # the 24 cache inputs and the 24 outputs are one box each (named for their stem), not a row 48 boxes wide
    io = {n.op_type for n in drawn.nodes if n.kind == KIND_GROUP and n.scope.startswith(IO_PREFIX)}
    assert io == {"past_key_values ×24", "present ×24"}, io
    x0, y0, x1, y1 = view.gscene.geometry.layout.bounds
    vw, vh = view.viewport().width(), view.viewport().height()
    filled = max((x1 - x0) * view.zoom / vw, (y1 - y0) * view.zoom / vh)
    assert filled >= 0.85 or view.zoom >= FIT_MAX - 1e-6, (filled, view.zoom)
    texts = drawn_texts(view)
    view.grab().save(str(artifacts_dir / f"graph_fit_top_{screen}.png"))
    assert min(px for _t, px in texts) >= LEGIBLE_PX, sorted(texts, key=lambda t: t[1])[:5]
    # every unit of the top level is named
    shown_text = " ".join(t for t, _px in texts)
    for n in drawn.nodes:
        label = n.op_type if n.kind == KIND_GROUP else (n.outputs or n.inputs or [n.name])[0]
        assert label[:6] in shown_text, (label, shown_text)


@pytest.mark.parametrize("screen", list(SIZES))
def test_an_opened_group_shows_its_op_names_after_fit(qtbot, decoder: Path, screen: str,
                                                      artifacts_dir: Path) -> None:
    view = _view(qtbot, decoder, SIZES[screen])
    biggest = max((n for n in view.graph.nodes if n.kind == KIND_GROUP), key=lambda n: view.gscene.group_size(
        n.index))
    _relaid(qtbot, view, lambda: view.expand(biggest.scope))
    first = view.expansion.hier.groups[biggest.scope].children[0]  # one layer opened inside it, as a reader would
    _relaid(qtbot, view, lambda: view.expand(first))
    view.fit_all()
    assert view.zoom < LOD_LABEL  # too far out for text in the boxes: the label layer names them
    texts = drawn_texts(view)
    view.grab().save(str(artifacts_dir / f"graph_fit_open_{screen}.png"))
    assert min(px for _t, px in texts) >= LEGIBLE_PX
    op_types = {n.op_type for n in view.graph.nodes if n.kind == KIND_OP}
    named_ops = [t for t, _px in texts if t in op_types]
    visible_ops = sum(1 for n in view.graph.nodes if n.kind == KIND_OP)
    # as many as fit without overlapping at this zoom (a third or more of the layer's ops), never shrunk
    assert len(named_ops) >= max(8, visible_ops // 3), (len(named_ops), visible_ops)
    assert {"MatMul", "Softmax"} <= set(named_ops)  # the rare, telling ops are named before the Constants


def test_text_is_legible_or_absent_at_every_zoom_and_chips_never_overlap(qtbot, decoder: Path) -> None:
    view = _view(qtbot, decoder, SIZES["1366x768"])
    _relaid(qtbot, view, view.expand_all)
    softmax = next(n.index for n in view.graph.nodes if n.op_type == "Softmax")
    for zoom in (2.0, 1.0, LOD_LABEL + 0.01, LOD_LABEL - 0.01, 0.5, 0.3, 0.15, 0.08, LOD_OVERVIEW / 2):
        view.set_scale(zoom)
        view.centerOn(view.gscene.geometry.rect_of(softmax).center())
        texts = drawn_texts(view)
        assert texts, zoom  # something is always named
        assert min(px for _t, px in texts) >= LEGIBLE_PX, (zoom, sorted(texts, key=lambda t: t[1])[:3])
        chips = view.gscene.labels.chips
        t = view.viewportTransform()
        rects = []
        for c in chips:
            p = t.map(c.x, c.y)
            rects.append(QRectF(p[0] - c.w / 2, p[1] - c.h / 2, c.w, c.h) if c.centred else
                         QRectF(p[0], p[1], c.w, c.h))
        for i, a in enumerate(rects):
            for b in rects[i + 1:]:
                assert not a.adjusted(1, 1, -1, -1).intersects(b.adjusted(1, 1, -1, -1)), (zoom, a, b)


def test_the_selection_is_named_even_among_many(qtbot, decoder: Path) -> None:
    view = _view(qtbot, decoder, SIZES["1366x768"])
    _relaid(qtbot, view, view.expand_all)
    view.set_scale(0.12)
    constants = [n.name for n in view.graph.nodes if n.op_type == "Identity"]
    view.select(constants[5], center=True, reveal=False)
    view.set_scale(0.12)
    drawn_texts(view)
    idx = view.graph.index_of(constants[5])
    assert idx in {c.unit for c in view.gscene.labels.chips}


def test_place_is_greedy_by_priority_without_overlap() -> None:
    import numpy as np

    # three chips on one spot and one apart: the first of the three in priority order wins, the far one stays
    x, y = np.array([0.0, 1.0, 2.0, 200.0]), np.zeros(4)
    w, h = np.full(4, 40.0), np.full(4, 14.0)
    assert place(x, y, w, h, np.array([2, 0, 1, 3])) == [2, 3]
    assert place(x, y, w, h, np.array([1, 3, 0, 2])) == [1, 3]


def _cjk_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["图像", "权重"], ["t"], name="视觉编码器/投影"),
         helper.make_node("Relu", ["t"], ["输出"], name="视觉编码器/激活")],
        "多语言", [helper.make_tensor_value_info("图像", TensorProto.FLOAT, [1, 4]),
                 helper.make_tensor_value_info("权重", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("输出", TensorProto.FLOAT, [1, 4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_names_in_other_scripts_get_a_font_with_their_glyphs_or_a_note(qtbot, tmp_path: Path,
                                                                       artifacts_dir: Path) -> None:
    """With a CJK font installed the names are drawn with it (every character covered by a family the view's
    fonts fall back to); without one the view says so and names the package (never boxes, quietly)."""
    from PySide6.QtGui import QFontDatabase

    from studio.gui.fonts import CJK_PACKAGE, families, uncovered

    view = _view(qtbot, _cjk_model(tmp_path / "cjk.onnx"), (700, 420))
    view.fit_all()
    texts = drawn_texts(view)
    assert any("输出" in t for t, _px in texts)
    cjk_families = QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese)
    view.grab().save(str(artifacts_dir / "graph_cjk_names.png"))
    if cjk_families:
        assert uncovered(["视觉编码器", "输出"]) == []
        assert not view.font_note.isVisible()
        assert set(families()) & set(cjk_families)  # the fallback is named, not left to luck
    else:
        assert view.font_note.isVisible() and view.font_note.missing
        assert CJK_PACKAGE in view.font_note.text() and "apt-get install" in view.font_note.text()


def test_netron_draws_names_with_the_studio_fonts(qtbot, tmp_path: Path, artifacts_dir: Path) -> None:
    """Netron's page gets the same families (with the CJK fallback when one is installed) before it lays out."""
    from studio.gui.fonts import families
    from studio.gui.inspector.netron_view import NetronView, webengine_problem

    problem = webengine_problem()
    if problem is not None:
        pytest.skip(problem)
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    holder = shown(qtbot, QWidget(), 800, 500)  # as in the inspector page: the view inside a page
    view = NetronView(parent=holder)
    QVBoxLayout(holder).addWidget(view)
    view.load(_cjk_model(tmp_path / "cjk.onnx"))
    qtbot.waitUntil(lambda: view.is_ready or view.problem is not None, timeout=60_000)
    assert view.problem is None, view.problem
    got: list[str] = []
    view.run_js("getComputedStyle(document.querySelector('g.graph-node text')).fontFamily", got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    wanted = [f.lower() for f in families()]
    assert all(f in got[0].lower() for f in wanted), (got[0], wanted)
    named: list[str] = []
    view.run_js("Array.from(document.querySelectorAll('g.graph-node text')).map(t => t.textContent).join('|')",
                named.append)
    qtbot.waitUntil(lambda: bool(named), timeout=10_000)
    assert "MatMul" in named[0]
    qtbot.wait(200)
    view.grab().save(str(artifacts_dir / "netron_cjk_names.png"))
    view.shutdown()


def test_the_platform_check_names_the_cjk_font_package_when_none_is_installed() -> None:
    """fontconfig's answer, as the platform check reads it, agrees with what Qt finds; the CLI prints the line."""
    import os
    import shutil
    import subprocess
    import sys

    from PySide6.QtGui import QFontDatabase

    from studio.gui import platform_check as pc

    if shutil.which("fc-list") is None:
        pytest.skip("fontconfig's fc-list is not installed")
    have_cjk = bool(QFontDatabase.families(QFontDatabase.WritingSystem.SimplifiedChinese))
    assert pc.missing_font_packages() == ([] if have_cjk else ["fonts-noto-cjk"])
    done = subprocess.run([sys.executable, "-m", "studio.gui.platform_check"], capture_output=True, text=True,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 0  # fonts are a warning, never a failure
    assert ("apt-get install -y --no-install-recommends fonts-noto-cjk" in done.stderr) == (not have_cjk)


def test_a_name_shortened_to_its_box_widens_only_into_free_space() -> None:
    """A wide name reserves its short form first: a neighbour's name is never blanked by it (an input pill stood
    empty beside a long group name), and it widens back to the whole name where nothing else was placed."""
    import numpy as np

    # unit 0 at x=100 (whole name 160 px wide, short 60 px), unit 1 at x=190 (whole name 60 px wide)
    x = np.array([100.0, 190.0, 100.0])
    y = np.array([50.0, 50.0, 50.0])
    w = np.array([160.0, 60.0, 60.0])
    h = np.array([16.0, 16.0, 16.0])
    owner = np.array([0, 1, 0])
    order = np.array([2, 1])  # the short form of unit 0 first (a group), then unit 1
    placed = place(x, y, w, h, order, owner=owner, stage=np.zeros(3, dtype=np.int64), upgrade={2: 0})
    assert sorted(placed) == [1, 2]  # both named; unit 0 stays short (its whole name would cover unit 1's)
    alone = place(x[[0, 2]], y[[0, 2]], w[[0, 2]], h[[0, 2]], np.array([1]), owner=np.array([0, 0]),
                  stage=np.zeros(2, dtype=np.int64), upgrade={1: 0})
    assert alone == [0]  # nothing beside it: the whole name

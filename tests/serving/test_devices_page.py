"""The Devices page under real Qt against the real local tritonserver: connect, models, live stats, inference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PIL import Image  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from studio.core.settings import Settings  # noqa: E402
from studio.core.workspace import Workspace  # noqa: E402
from studio.gui.main_window import MainWindow  # noqa: E402
from studio.gui.pages.devices_page import DevicesPage  # noqa: E402
from studio.gui.theme import apply_theme  # noqa: E402
from studio.gui.widgets.confirm import pending, press  # noqa: E402
from studio.triton.client import TritonClient  # noqa: E402
from studio.triton.repo_builder import BuildOptions, build_repo  # noqa: E402
from studio.triton.server import LocalTritonServer  # noqa: E402
from tests.edge.helpers import free_port  # noqa: E402
from tests.serving import tiny_models as tm  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.triton, pytest.mark.timeout(300),
              pytest.mark.qt_log_level_fail("WARNING"), pytest.mark.qt_log_ignore("propagateSizeHints")]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tm.split_export(tmp_path_factory.mktemp("export"))


@pytest.fixture(scope="module")
def server(export_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    repo = tmp_path_factory.mktemp("repo")
    build_repo(BuildOptions(tm.mlp(export_dir.parent / "mlp.onnx"), repo, "mlp", flavor="python"))
    build_repo(BuildOptions(export_dir, repo, "clip"))
    with LocalTritonServer(repo, load_models=["mlp", "clip"]) as srv:
        yield srv


@pytest.fixture
def window(qtbot, tmp_path: Path):  # noqa: ANN001, ANN201
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="devices-ws")
    w = MainWindow(ws, settings=Settings.load(), page_specs=[("studio.gui.pages.devices_page", "DevicesPage")],
                   restore_state=False)
    qtbot.addWidget(w)
    w.resize(1440, 900)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.page("devices").shutdown()
    w.jobs.shutdown()


def _item_text(page: DevicesPage, name: str) -> str:
    for i in range(page.server_list.count()):
        if page.server_list.item(i).data(256) == name:  # Qt.UserRole
            return page.server_list.item(i).text()
    return ""


def test_devices_page_watches_controls_and_infers(qtbot, window, server, export_dir: Path,  # noqa: ANN001
                                                  artifacts_dir: Path, tmp_path: Path) -> None:
    page = window.page("devices")
    assert isinstance(page, DevicesPage)
    assert page.sections.tabText(0) == "Servers and agents"  # the hook other device kinds add tabs to
    assert [page.sections.tabText(i) for i in range(page.sections.count())] == ["Servers and agents", "Edge agents"]
    page.timer.setInterval(500)
    page.add_server(server.http_url, name="local", metrics_url=server.metrics_url)
    qtbot.waitUntil(lambda: page.snapshots.get("local") is not None and page.snapshots["local"].connected,
                    timeout=20000)
    qtbot.waitUntil(lambda: page.models_table.rowCount() >= 5, timeout=10000)
    models = {page.models_table.item(r, 0).text(): page.models_table.item(r, 2).text()
              for r in range(page.models_table.rowCount())}
    assert models["clip"] == "READY" and models["clip_vision"] == "READY" and models["mlp"] == "READY"
    assert "live yes" in page.status_label.text() and "binary_tensor_data" in page.ext_label.toolTip()

    # live statistics: requests sent by someone else show up at the next poll
    c = TritonClient(server.grpc_url)
    for _ in range(3):
        c.infer("mlp", {"x": np.ones((2, 16), np.float32)})

    def mlp_inferences() -> int:
        for r in range(page.stats_table.rowCount()):
            if page.stats_table.item(r, 0).text() == "mlp":
                return int(page.stats_table.item(r, 2).text())
        return 0

    qtbot.waitUntil(lambda: mlp_inferences() >= 6, timeout=10000)
    metrics = {page.metrics_table.item(r, 0).text(): page.metrics_table.item(r, 1).text()
               for r in range(page.metrics_table.rowCount())}
    assert metrics["CPU memory total"].endswith("MiB") and metrics["GPU power"] == "not available"

    # test inference from an image file and text through the model's tokenizer
    img = tmp_path / "cat.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(img)
    page.infer_model.setCurrentText("clip")
    page.infer_text.setText("a photo of a cat")
    page.infer_image.edit.setText(str(img))
    page.infer_tokenizer.edit.setText(str(export_dir / "tokenizer.json"))
    page.infer_processor.edit.setText(str(export_dir / "preprocessor_config.json"))
    page.detail_tabs.setCurrentIndex(2)
    page.infer_btn.click()
    qtbot.waitUntil(lambda: "image_embeds" in page.infer_out.toPlainText(), timeout=20000)
    out = page.infer_out.toPlainText()
    assert "text_embeds: shape [1, 8]" in out and "pixel_values: shape [1, 3, 8, 8]" in out
    window.grab().save(str(artifacts_dir / "devices_page_inference.png"))

    # config viewer and model control (unload, then load again)
    for r in range(page.models_table.rowCount()):
        if page.models_table.item(r, 0).text() == "mlp":
            page.models_table.selectRow(r)
    page.detail_tabs.setCurrentIndex(0)
    page.action_buttons["config"].click()
    qtbot.waitUntil(lambda: '"backend": "python"' in page.config_view.toPlainText(), timeout=10000)
    page.action_buttons["unload"].click()
    box = pending(page)  # unloading asks first
    assert box is not None and "Unload mlp" in box.text()
    press(box, "Unload")
    qtbot.waitUntil(lambda: not c.model_ready("mlp"), timeout=20000)
    page.action_buttons["load"].click()
    qtbot.waitUntil(lambda: c.model_ready("mlp"), timeout=30000)

    # a server that does not answer shows as disconnected, the page keeps working, and it is picked up later
    port, mport = free_port(), free_port()
    page.add_server(f"http://127.0.0.1:{port}", name="late", metrics_url=f"http://127.0.0.1:{mport}/metrics")
    qtbot.waitUntil(lambda: "disconnected" in _item_text(page, "late"), timeout=15000)
    assert "disconnected" in page.status_label.text()
    assert window.devices_label.text().startswith("devices:")
    assert {d.name for d in window.workspace.devices} == {"local", "late"}
    late_repo = tmp_path / "late-repo"
    build_repo(BuildOptions(tm.mlp(tmp_path / "m.onnx"), late_repo, "mlp", flavor="python"))
    with LocalTritonServer(late_repo, http_port=port, metrics_port=mport, load_models=["mlp"]):
        qtbot.waitUntil(lambda: "-  connected\n" in _item_text(page, "late"), timeout=20000)
        qtbot.waitUntil(lambda: page.models_table.rowCount() == 1, timeout=10000)
    page.server_list.setCurrentRow(0)
    page.detail_tabs.setCurrentIndex(1)
    qtbot.waitUntil(lambda: page.stats_table.rowCount() >= 4, timeout=10000)
    window.grab().save(str(artifacts_dir / "devices_page_stats.png"))



def _open_fds() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def live_gevent_hubs() -> int:
    """Hubs not destroyed yet (each holds a libev loop: two descriptors). Counted, as descriptors alone are not a
    steady signal: a hub's loop is sometimes closed when its thread's locals are collected, sometimes never."""
    import gc

    from gevent.hub import Hub

    return sum(issubclass(type(o), Hub) and o.loop is not None for o in gc.get_objects())  # type(): no proxies touched


def test_polling_leaves_no_gevent_loops_behind(qtbot, window, server) -> None:  # noqa: ANN001
    """Each device's polls run tritonclient.http (gevent) on its one poller thread: one hub per device, however many
    polls. Before, hubs piled up (42 after 40 polls) with two descriptors each: an open studio ran out of them
    within the hour."""
    page: DevicesPage = window.page("devices")
    page.timer.stop()
    page.add_server(server.http_url, name="local")
    qtbot.waitUntil(lambda: "local" in page.snapshots and page.snapshots["local"].connected, timeout=30_000)

    def poll_once() -> None:
        at = page.snapshots["local"].at
        page.poll("local")
        qtbot.waitUntil(lambda: page.snapshots["local"].at != at and not page.polling("local"), timeout=30_000)

    poll_once()
    hubs, fds = live_gevent_hubs(), _open_fds()
    for _ in range(40):
        poll_once()
    qtbot.wait(200)  # the last poll thread ends just after its snapshot arrives
    assert page.snapshots["local"].connected
    assert live_gevent_hubs() - hubs <= 1, f"{live_gevent_hubs() - hubs} gevent hubs more after 40 polls"
    assert _open_fds() - fds < 8, f"{_open_fds() - fds} descriptors more after 40 polls"

"""Package page: deploy an existing bundle (verified, a tampered one refused in place) and the public key an
agent must trust (real keys, real bundles, real Qt offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.workspace import Workspace
from studio.gui.pages.packaging_page import PackagingPage
from studio.package.bundle import build_bundle
from studio.package.keys import KeyStore, load_trusted_keys
from tests.edge.helpers import make_mlp, read_members, write_members

pytestmark = pytest.mark.gui
PASS = "bundle actions"


@pytest.fixture
def page(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    ws = Workspace.create(tmp_path / "ws")
    make_mlp(ws.models_dir / "tiny-mlp" / "model.onnx")
    ws.add_model(ws.models_dir / "tiny-mlp", name="tiny-mlp", kind="onnx")
    KeyStore().generate("release", PASS)
    p = PackagingPage()
    qtbot.addWidget(p)
    p.set_context(ws, "tiny-mlp", "ort-cpu")
    yield p
    p.jobs.shutdown()


def _bundle(page: PackagingPage, out: Path) -> Path:
    sk = KeyStore().load_signing_key("release", PASS)
    build_bundle(page.workspace.models_dir / "tiny-mlp", "generic-x86_64", sk, out, name="tiny-mlp", version="7")
    return out


def _wait(qtbot, page: PackagingPage) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: all(h.status != "running" for h in page.jobs.handles.values()), timeout=30_000)


def test_an_existing_bundle_is_verified_then_deployable(qtbot, page: PackagingPage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = _bundle(page, tmp_path / "tiny-mlp-7.tar")
    page.open_bundle(good)
    _wait(qtbot, page)
    assert page.bundle_path == good and page.verify_report.version == "7"
    assert "verified" in page.result_title.text() and page.files.rowCount() >= 2
    assert page.open_bundle_btn.isEnabled()

    tampered = []  # one model byte changed after signing
    for ti, data in read_members(good):
        if data is not None and ti.name.endswith(".onnx"):
            data = data[:-1] + bytes([data[-1] ^ 1])
        tampered.append((ti, data))
    bad = write_members(tmp_path / "tampered.tar", tampered)
    page.open_bundle(bad)
    _wait(qtbot, page)
    assert page.bundle_path is None or page.bundle_path == good  # the tampered one never becomes deployable
    assert page.bundle_path != bad
    assert not page.error.isHidden() and "does not match the signed manifest" in page.error.text()


def test_bundle_signed_by_a_key_the_studio_does_not_hold(qtbot, page: PackagingPage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    good = _bundle(page, tmp_path / "b.tar")
    other = KeyStore(tmp_path / "other-keys")
    other.generate("someone", "x")
    sk = other.load_signing_key("someone", "x")
    foreign = tmp_path / "foreign.tar"
    build_bundle(page.workspace.models_dir / "tiny-mlp", "generic-x86_64", sk, foreign, name="tiny-mlp",
                 version="8")
    page.open_bundle(foreign)
    _wait(qtbot, page)
    assert page.bundle_path != foreign and not page.error.isHidden() and "trust" in page.error.text().lower()
    assert good.is_file()


def test_public_key_dialog_copies_and_saves(qtbot, page: PackagingPage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QGuiApplication

    from studio.gui.widgets.bundle_actions import PublicKeyDialog

    page.key_combo.setCurrentIndex(page.key_combo.findData("release"))
    page.pub_btn.click()
    dlg = page.findChild(PublicKeyDialog)
    assert dlg is not None and dlg.isVisible()
    dlg.copy_btn.click()
    assert QGuiApplication.clipboard().text() == KeyStore().export_public("release")
    saved = dlg.save(tmp_path / "release.pub")
    trust = load_trusted_keys(saved)  # what install-agent.sh --trust reads
    assert trust.ids() == load_trusted_keys(KeyStore().public_path("release")).ids()
    dlg.close()

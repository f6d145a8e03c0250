"""Package page: deploy an existing bundle (verified, a tampered one refused in place) and the public key an
agent must trust (real keys, real bundles, real Qt offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from studio.core.workspace import Workspace
from studio.edge.trust import load_trusted_keys
from studio.gui.pages.packaging_page import PackagingPage
from studio.package.bundle import build_bundle
from studio.package.keys import KeyStore
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


def test_public_key_pushed_to_a_real_agent_or_refused_in_place(qtbot, page: PackagingPage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from studio.gui.widgets.bundle_actions import PublicKeyDialog
    from studio.package.client import AgentClient
    from tests.edge.helpers import AgentProcess, trust_key, write_token

    owner = trust_key(KeyStore(), "board-owner", "x", tmp_path / "owner.pub")
    token = write_token(tmp_path / "token")
    open_agent = AgentProcess(tmp_path / "a1", owner, token, extra=["--allow-trust-push"]).start()
    closed_agent = AgentProcess(tmp_path / "a2", owner, token).start()
    try:
        page.agents.add_agent(open_agent.url, token, name="open")
        page.agents.add_agent(closed_agent.url, token, name="closed")
        page.key_combo.setCurrentIndex(page.key_combo.findData("release"))
        page.pub_btn.click()
        dlg = page.findChild(PublicKeyDialog)
        assert dlg.push_btn.isEnabled() and dlg.agent_combo.count() == 2
        dlg.agent_combo.setCurrentIndex(dlg.agent_combo.findText("open", Qt.MatchFlag.MatchStartsWith))
        dlg.push_btn.click()
        _wait(qtbot, page)
        kid = load_trusted_keys(KeyStore().public_path("release")).ids()[0]
        assert f"now trusts key {kid}" in dlg.status.text()
        assert kid in AgentClient(open_agent.url, token.read_text().strip()).trust()["trusted_keys"]
        dlg.agent_combo.setCurrentIndex(dlg.agent_combo.findText("closed", Qt.MatchFlag.MatchStartsWith))
        dlg.push_btn.click()
        _wait(qtbot, page)
        assert "does not accept keys" in dlg.status.text() and "--allow-trust-push" in dlg.status.text()
        assert kid not in AgentClient(closed_agent.url, token.read_text().strip()).trust()["trusted_keys"]
        dlg.close()
    finally:
        open_agent.stop()
        closed_agent.stop()



def test_a_bundle_the_agent_does_not_trust_is_refused_in_place(qtbot, page: PackagingPage, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Signed with the studio's 'release' key, deployed to a real agent that trusts only its owner's key: the
    agent's refusal is shown at the agent field with the GUI's way out (push the key), the agent keeps serving."""
    from studio.package.client import AgentClient
    from tests.edge.helpers import AgentProcess, trust_key, write_token

    owner = trust_key(KeyStore(), "board-owner", "x", tmp_path / "owner.pub")
    token = write_token(tmp_path / "token")
    agent = AgentProcess(tmp_path / "a", owner, token).start()
    try:
        page.agents.add_agent(agent.url, token, name="board")
        page.open_bundle(_bundle(page, tmp_path / "tiny-mlp-7.tar"))
        _wait(qtbot, page)
        page.agent_combo.setCurrentIndex(page.agent_combo.findData(agent.url))
        assert page.deploy_btn.isEnabled()
        qtbot.mouseClick(page.deploy_btn, Qt.MouseButton.LeftButton)
        _wait(qtbot, page)
        text = page.error.text()
        assert not page.error.isHidden() and "untrusted key" in text, text
        assert "Push to agent" in text and "--trust" not in text, text  # the control, not the agent's CLI flag
        assert AgentClient(agent.url, token.read_text().strip()).status()["models"] == {}  # nothing deployed
    finally:
        agent.stop()

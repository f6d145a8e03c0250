"""The Fleet page (real Qt offscreen) over the session's eight real agents: a fleet made from the connected
agents in Devices, a rollout started, watched and finished from the page, the saved state shown again by a new
page (a restarted studio), and bad input refused in place with nothing deployed."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from studio.gui.jobs_qt import JobRunner  # noqa: E402
from studio.gui.pages.fleet_page import FleetPage  # noqa: E402
from tests.gui.gui_helpers import shown  # noqa: E402

pytestmark = [pytest.mark.gui, pytest.mark.timeout(240)]


def _page(qtbot, lab) -> FleetPage:  # type: ignore[no-untyped-def]
    page = shown(qtbot, FleetPage(JobRunner()), 1366, 768, exposed=False)
    page.set_context(lab.ws, None, None)
    return page


def test_rollout_from_the_page_and_the_state_after_a_restart(qtbot, lab, artifacts_dir: Path) -> None:  # type: ignore[no-untyped-def]
    lab.deploy_all("gpage", "1")
    page = _page(qtbot, lab)
    page.new_edit.setText("gui")
    page.token_edit.setText(str(lab.dev.token))  # one management token for the fleet (the lab's agents share it)
    qtbot.mouseClick(page.create_btn, Qt.MouseButton.LeftButton)
    assert page.fleet_combo.currentText() == "gui" and "lab" in page.fleet_names()
    assert page.add_connected_agents() == len(lab.agents)  # every agent in Devices, token files by reference
    assert page.add_connected_agents() == 0  # each once
    page.bundle_edit.setText(str(lab.bundle("gpage", "2")))
    page.plan_edit.setText("canary:1,50%,100%")
    page.gate_combo.setCurrentText("L3")
    page.watch_edit.setText("1s")
    page.probe.setValue(20)
    # bad input first: a plan whose percentages go down is refused in place, nothing deployed
    page.plan_edit.setText("50%,25%")
    page.start_rollout()
    assert page.field_error.isVisible() and "plan" in page.field_error.text().lower()
    assert lab.active("gpage") == ["1"] * len(lab.agents)
    page.plan_edit.setText("canary:1,50%,100%")
    page.start_rollout()
    assert not page.field_error.isVisible(), page.field_error.text()
    assert not page.start_btn.isEnabled() and page.pause_btn.isEnabled()
    qtbot.waitUntil(lambda: page.rollout is not None and page.rollout.finished, timeout=180_000)
    qtbot.waitUntil(lambda: page.start_btn.isEnabled(), timeout=10_000)
    st = page.rollout
    assert st.status == "succeeded", st.events[-3:]
    assert [page.agents_model.cell(r, 3) for r in range(page.agents_model.rowCount())] == ["passed"] * 8
    assert {page.agents_model.cell(r, 4) for r in range(8)} == {"2"}
    assert page.agents_model.cell(0, 2) == "1 canary"
    assert page.timeline.count() == len(st.events) > 8
    assert "succeeded" in page.status_label.text()
    assert lab.active("gpage") == ["2"] * len(lab.agents)
    page.grab().save(str(artifacts_dir / "fleet_page.png"))
    page.close()
    # a restarted studio: a new page reads the saved rollout of the fleet
    again = _page(qtbot, lab)
    again.fleet_combo.setCurrentText("gui")
    assert again.rollout is not None and again.rollout.status == "succeeded"
    assert again.agents_model.rowCount() == 8 and not again.resume_btn.isEnabled()
    again.close()
    gc.collect()


def test_members_what_was_added_and_the_newest_bundle_are_shown(qtbot, lab, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                 artifacts_dir: Path) -> None:
    """A new fleet's members table fills when the connected agents are added, the line above it says which were
    added (and which were members already), and Bundle follows the current model's newest bundle artifact
    (the Package page's build) until the user picks another file."""
    from tests.edge.helpers import make_mlp

    page = _page(qtbot, lab)
    model = make_mlp(tmp_path / "members" / "members.onnx")
    page.state.add_model(model, name="members-model")
    assert page.bundle_edit.text() == ""  # nothing built for it yet
    first = lab.bundle("members", "1", model)
    page.state.record_artifact("bundle", first, "members-model")
    assert page.bundle_edit.text() == str(first)  # the build just made, not the first letter of its path
    second = lab.bundle("members", "2", model)
    page.state.record_artifact("bundle", second, "members-model")
    assert page.bundle_edit.text() == str(second)  # the field follows the newest while it is the page's
    mine = str(tmp_path / "chosen.tar")
    page.bundle_edit.setText(mine)
    page.state.record_artifact("bundle", lab.bundle("members", "3", model), "members-model")
    assert page.bundle_edit.text() == mine  # a path the user chose is theirs

    page.new_edit.setText("members")
    qtbot.mouseClick(page.create_btn, Qt.MouseButton.LeftButton)
    assert page.fleet_combo.currentText() == "members"
    assert page.table.model() is page.members_model and page.members_model.rowCount() == 0
    assert "0 members" in page.members_label.text()
    assert page.add_connected_agents() == len(lab.agents)
    rows = page.members_model.rows
    assert [r[0] for r in rows] == [f"a{i}" for i in range(len(lab.agents))]
    assert {r[1] for r in rows} == {a.url for a in lab.agents}
    said = page.members_label.text()
    assert f"Added {len(lab.agents)} agents to fleet <b>members</b>" in said and lab.agents[0].url in said
    assert f"{len(lab.agents)} members" in said
    qtbot.wait(50)  # the label's new height laid out
    page.grab().save(str(artifacts_dir / "fleet_members_added.png"))
    assert page.add_connected_agents() == 0
    said = page.members_label.text()
    assert "No agent added" in said and f"{len(lab.agents)} connected agents were already members" in said
    page.close()

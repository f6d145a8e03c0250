"""The one workspace state (studio.core.state): observers, artifacts, devices and their live states, reopen."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.core.state import StudioState
from studio.core.workspace import DeviceEntry, Workspace


@pytest.fixture
def state(tmp_path: Path) -> StudioState:
    ws = Workspace.create(tmp_path / "ws", name="s")
    (ws.models_dir / "clip").mkdir()
    (ws.models_dir / "clip" / "config.json").write_text("{}")
    (ws.models_dir / "clip" / "model.onnx").write_bytes(b"")
    return StudioState(ws)


def test_every_subscriber_hears_a_change_at_once(state: StudioState) -> None:
    seen: list[tuple[str, object]] = []
    other: list[str] = []
    state.subscribe("*", lambda t, p: seen.append((t, p)))
    stop = state.subscribe("target", lambda t, p: other.append(p))
    entry = state.add_model(state.workspace.models_dir / "clip", name="clip")
    state.set_target("rk3588")
    stop()
    state.set_target("tensorrt")
    assert ("model", "clip") in seen and ("target", "rk3588") in seen and ("target", "tensorrt") in seen
    assert other == ["rk3588"]  # unsubscribed before the second change
    assert entry.kind == "onnx" and state.model_name == "clip"
    state.set_target("tensorrt")  # no change, no event
    assert sum(1 for t, _ in seen if t == "target") == 2
    with pytest.raises(ValueError, match="unknown state topic"):
        state.subscribe("nope", lambda t, p: None)
    with pytest.raises(InputError, match="no model named 'ghost'"):
        state.set_model("ghost")


def test_artifacts_are_saved_relative_and_restored_on_reopen(state: StudioState, tmp_path: Path) -> None:
    ws = state.workspace
    state.add_model(ws.models_dir / "clip", name="clip")
    export = ws.models_dir / "clip"
    state.record_artifact("parts", {"vision": export / "model.vision.onnx", "text": export / "model.text.onnx"})
    state.record_artifact("tokenizer", export / "tokenizer.json")
    state.record_artifact("bundle", tmp_path / "outside" / "clip-1.tar")
    state.record_artifact("bundle", ws.root / "bundles" / "clip-2.tar")
    raw = (ws.root / "workspace.json").read_text()
    assert '"models/clip/model.vision.onnx"' in raw  # relative inside the workspace: it can move
    assert str(tmp_path / "outside" / "clip-1.tar") in raw  # absolute outside it

    again = StudioState(Workspace.open(ws.root))
    arts = again.artifacts("clip")
    assert arts["parts"]["vision"] == str(export / "model.vision.onnx")
    assert arts["tokenizer"] == str(export / "tokenizer.json")
    assert again.artifact("bundle") == str(ws.root / "bundles" / "clip-2.tar")  # newest of a list kind
    assert len(arts["bundle"]) == 2
    again.add_model(ws.models_dir / "clip", name="clip")  # the same model added again keeps its artifacts
    assert again.artifact("tokenizer") == str(export / "tokenizer.json")
    with pytest.raises(ValueError, match="unknown artifact kind"):
        again.record_artifact("weights", "x")


def test_one_device_list_with_live_states_and_summary(state: StudioState) -> None:
    events: list[tuple[str, object]] = []
    state.subscribe("*", lambda t, p: events.append((t, p)))
    state.add_device(DeviceEntry("local-triton", "http://127.0.0.1:8000", "triton",
                                 extra={"metrics_url": "http://127.0.0.1:8002/metrics"}))
    state.add_device(DeviceEntry("board", "http://127.0.0.1:8765", "agent", extra={"token_file": "/t"}),
                     select=True)
    assert [d.name for d in state.devices("agent")] == ["board"]
    assert state.selected_device is not None and state.selected_device.name == "board"
    assert state.summary().label() == "devices: 0 ok of 2"
    state.set_device_state("http://127.0.0.1:8765", "ok", board="rk3588")  # by URL as pollers know it
    state.set_device_state("local-triton", "refused", "connection refused")
    s = state.summary()
    assert (s.total, s.ok, s.down) == (2, 1, 1) and s.label() == "devices: 1 ok, 1 down of 2"
    assert state.device_state("board").board == "rk3588"
    assert ("device_state", "board") in events and ("selection", "board") in events
    # a replaced device (same URL, new name) is one device, not two
    state.add_device(DeviceEntry("rk-board", "http://127.0.0.1:8765", "agent"))
    assert [d.name for d in state.devices()] == ["local-triton", "rk-board"]
    state.remove_device("rk-board")
    assert [d.name for d in StudioState(Workspace.open(state.workspace.root)).devices()] == ["local-triton"]
    with pytest.raises(InputError, match="not a device URL"):
        state.add_device(DeviceEntry("x", "board:8765", "agent"))


def test_live_states_from_worker_threads(state: StudioState) -> None:
    state.add_device(DeviceEntry("a", "http://127.0.0.1:1", "agent"))
    heard: list[str] = []
    state.subscribe("device_state", lambda t, p: heard.append(threading.current_thread().name))
    threads = [threading.Thread(target=state.set_device_state, args=("a", f"s{i}"), name=f"poll-{i}")
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(heard) == 8 and all(n.startswith("poll-") for n in heard)
    assert state.device_state("a").state.startswith("s")

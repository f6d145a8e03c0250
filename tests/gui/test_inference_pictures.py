"""Test inference shows pictures (real Qt offscreen, a real edge agent serving an exported tiny CLIP): the input
image and the model's view of it (the request's own pixel tensor, normalisation undone), the zero-shot scores of
the labels the user typed as bars (softmax over logits_per_image), times in ms; an audio input's waveform and
log-mel through the agent's own front end."""

from __future__ import annotations

import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from PySide6.QtWidgets import QApplication

from studio.core.settings import Settings
from studio.core.workspace import DeviceEntry, Workspace
from studio.gui.devices.previews import softmax, split_labels
from studio.gui.devices.result_view import THUMB
from studio.gui.main_window import MainWindow
from studio.gui.theme import apply_theme
from tests.edge.helpers import PASSPHRASE, AgentProcess, dev_keys, export_sample

pytestmark = [pytest.mark.gui, pytest.mark.timeout(300), pytest.mark.qt_log_ignore("propagateSizeHints")]

RED = (200, 40, 30)


@pytest.fixture(scope="module")
def clip_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _sample, folder = export_sample(tmp_path_factory.mktemp("clip"), "tiny-clip")
    return folder


@pytest.fixture
def agent(tmp_path: Path, clip_export: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentProcess]:
    """A real studio-agent serving the tiny CLIP export as "clip", from a bundle signed and deployed here."""
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle

    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    dev = dev_keys(tmp_path)
    a = AgentProcess(tmp_path / "agent-data", dev.trust, dev.token).start()
    bundle = build_bundle(clip_export, "generic-x86_64", dev.signing_key, tmp_path / "clip.tar", name="clip",
                          version="1").bundle
    deploy_bundle(Path(bundle), a.url, dev.token.read_text().strip())
    yield a
    a.stop()


@pytest.fixture
def window(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    apply_theme(QApplication.instance(), "light")
    ws = Workspace.create(tmp_path / "ws", name="pictures")
    w = MainWindow(ws, settings=Settings.load(), page_specs=[("studio.gui.pages.devices_page", "DevicesPage")],
                   restore_state=False)
    qtbot.addWidget(w)
    w.resize(1366, 768)
    w.show()
    qtbot.waitExposed(w)
    yield w
    w.page("devices").shutdown()
    w.jobs.shutdown()
    w.close()


def test_zero_shot_scores_and_the_models_view_after_a_real_inference(qtbot, window, agent: AgentProcess,
                                                                     clip_export: Path, tmp_path: Path,
                                                                     artifacts_dir: Path) -> None:
    devices = window.page("devices")
    window.state.add_device(DeviceEntry("agent", agent.url, "agent", extra={"token_file": str(agent.token_file)}),
                            select=True)
    qtbot.waitUntil(lambda: devices.infer_model.findText("clip") >= 0, timeout=60_000)
    f = devices.inference
    f.model.setCurrentText("clip")
    img = tmp_path / "red.png"
    Image.new("RGB", (96, 64), RED).save(img)  # one colour: the model's view must show that colour again
    labels = "a red square, a photo of a dog, a diagram of a circuit"
    f.text.setText(labels)
    f.image.edit.setText(str(img))
    f.tokenizer.edit.setText(str(clip_export / "tokenizer.json"))
    f.processor.edit.setText(str(clip_export / "processor_config.json"))
    devices.detail_tabs.setCurrentWidget(f)
    results: list[dict] = []
    original = f.show_result
    f.show_result = lambda res: (results.append(res), original(res))  # type: ignore[method-assign]
    devices.run_test_inference()
    qtbot.waitUntil(lambda: bool(results) or "error" in f.out.toPlainText().lower(), timeout=60_000)
    assert results, f.out.toPlainText()
    res = results[0]
    pv = f.result.previews
    assert pv is res["previews"]

    # the input image and the model's view: the request's pixel tensor (32x32 for tiny CLIP), same colour
    assert res["inputs"]["pixel_values"][0] == [1, 3, 32, 32]
    assert pv.image is not None and pv.image.shape == (64, 96, 3)
    assert pv.model_view is not None and pv.model_view.shape == (32, 32, 3)
    assert np.abs(pv.model_view.astype(int) - np.array(RED)).max() <= 2  # normalisation undone exactly
    for label in (f.result.image_label, f.result.view_label):
        pix = label.pixmap()
        assert not pix.isNull() and max(pix.width(), pix.height()) == THUMB
    centre = f.result.view_label.pixmap().toImage().pixelColor(THUMB // 2, THUMB // 2)
    assert abs(centre.red() - RED[0]) <= 2 and abs(centre.green() - RED[1]) <= 2

    # zero-shot: one text per label in the request, the bars are the softmax of logits_per_image
    assert res["inputs"]["input_ids"][0][0] == 3  # [texts, tokens]
    logits = np.asarray(res["outputs"]["logits_per_image"])
    assert logits.shape == (1, 3)
    want = softmax(logits[0])
    assert pv.labels == split_labels(labels)
    assert np.allclose(pv.scores, want, atol=1e-9) and abs(sum(pv.scores) - 1) < 1e-9
    bars = f.result.scores
    assert bars.isVisible() and [n for n, _ in bars.rows] == [pv.labels[i] for i in np.argsort(-want)]
    assert f"{100 * want.max():.1f} %" in f.result.scores_caption.text()
    # times in ms, the raw arrays still there
    assert "ms round trip" in f.result.headline.text() and "µs" not in f.result.headline.text()
    assert "outputs:" in f.out.toPlainText() and "logits_per_image" in f.out.toPlainText()
    qtbot.wait(100)
    window.grab().save(str(artifacts_dir / "inference_pictures_zero_shot.png"))
    f.grab().save(str(artifacts_dir / "inference_pictures_form.png"))


def test_audio_shows_its_waveform_and_log_mel_through_the_agents_front_end(qtbot, tmp_path: Path,
                                                                            artifacts_dir: Path) -> None:
    from studio.agent.preprocess import LogMelFeatures
    from studio.edge.raw_inputs import processor_config
    from studio.export.api import write_sample
    from studio.gui.devices.inference_form import InferenceForm
    from tests.gui.gui_helpers import shown

    whisper = write_sample("tiny-whisper", tmp_path / "tiny-whisper")
    proc = next(p for p in (whisper / "preprocessor_config.json", whisper / "processor_config.json") if p.is_file())
    clip = tmp_path / "tone.wav"
    rate = 8000  # resampled to the processor's 16 kHz by the agent's front end
    t = np.arange(int(0.5 * rate)) / rate
    with wave.open(str(clip), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.sin(2 * np.pi * 440 * t) * 12000).astype("<i2").tobytes())
    f = shown(qtbot, InferenceForm(), 800, 700)
    f.audio.edit.setText(str(clip))
    f.processor.edit.setText(str(proc))
    f.start_stream()  # a generation starts: the audio sent with the prompt is drawn
    pv = f.result.previews
    assert pv is not None and pv.sample_rate == 16000
    assert pv.waveform is not None and abs(len(pv.waveform) - 8000) <= 2  # 0.5 s at 16 kHz
    cfg = processor_config({proc.name: proc}, "feature_extractor")
    mel = LogMelFeatures(cfg)
    assert pv.log_mel is not None and pv.log_mel.shape[0] == mel.n_mels
    assert np.allclose(pv.log_mel, mel.one(pv.waveform)[:, : pv.log_mel.shape[1]])
    assert f.result.waveform.isVisible() and f.result.waveform.wave is pv.waveform
    assert not f.result.mel_label.pixmap().isNull() and "log-mel" in f.result.mel_caption.text()
    f.grab().save(str(artifacts_dir / "inference_pictures_audio.png"))

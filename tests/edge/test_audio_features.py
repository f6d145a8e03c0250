"""Whisper log-mel features on the agent (numpy only) against transformers' WhisperFeatureExtractor, and raw WAV
requests on /infer for the tiny-whisper bundle on a real agent matching ONNX Runtime on the HF extractor's
features. That is the single-pass graph (`studio export --no-with-past`: input_features + decoder_input_ids ->
logits); the default export (encoder + decoder with past) takes WAVs on /generate (tests/edge/
test_agent_generate_media.py)."""

from __future__ import annotations

import base64
import io
import json
import tarfile
import wave
from pathlib import Path

import httpx
import numpy as np
import pytest

from studio.core.errors import BundleError
from studio.edge.preprocess import AudioPreprocessor, LogMelFeatures, build_preprocessors, slaney_mel_filters
from studio.edge.raw_inputs import declare_raw_inputs
from tests.edge.helpers import export_sample

pytestmark = pytest.mark.export

TINY = {"feature_size": 16, "sampling_rate": 16000, "hop_length": 160, "chunk_length": 1, "n_fft": 400}


def _hf(cfg: dict):  # type: ignore[no-untyped-def]
    from transformers import WhisperFeatureExtractor

    return WhisperFeatureExtractor(**cfg)


def _config(fe) -> dict:  # type: ignore[no-untyped-def]
    """The extractor's settings as its saved JSON carries them (transformers 5 saves no mel filters)."""
    return {k: v for k, v in json.loads(fe.to_json_string()).items() if k != "mel_filters"}


def _wav(samples: np.ndarray, rate: int, width: int = 2) -> bytes:
    """PCM WAV of ``samples`` ([n] or [n, channels], floats in [-1, 1])."""
    x = samples if samples.ndim == 2 else samples[:, None]
    dt = np.int16 if width == 2 else np.int32
    pcm = np.round(x * np.iinfo(dt).max).astype(dt)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(x.shape[1])
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


@pytest.mark.parametrize("cfg", [TINY, {}], ids=["tiny-whisper", "whisper-default"])
@pytest.mark.parametrize("seconds", [0.37, 1.0, 31.5])
def test_log_mel_matches_whisper_feature_extractor(cfg: dict, seconds: float) -> None:
    fe = _hf(cfg)
    ours = LogMelFeatures(_config(fe))
    np.testing.assert_allclose(ours.filters, fe.mel_filters, atol=1e-12)
    rng = np.random.default_rng(3)
    wave_ = (rng.standard_normal(int(seconds * fe.sampling_rate)) * 0.2).astype(np.float32)
    wave_[: len(wave_) // 5] = 0.0  # a silent stretch exercises the log clamp and the 8-decade floor
    want = fe(wave_, sampling_rate=fe.sampling_rate, return_tensors="np")["input_features"][0]
    got = ours.one(wave_)
    assert got.shape == want.shape == (fe.feature_size, fe.nb_max_frames) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=0)


def test_saved_mel_filters_are_used_and_checked() -> None:
    fe = _hf(TINY)
    cfg = _config(fe)
    doubled = (2.0 * slaney_mel_filters(201, 16, 16000)).T.tolist()  # stored [n_mels, n_freqs] is accepted
    ours = LogMelFeatures({**cfg, "mel_filters": doubled})
    np.testing.assert_allclose(ours.filters, 2.0 * fe.mel_filters, atol=1e-12)
    with pytest.raises(BundleError, match="inconsistent"):
        LogMelFeatures({**cfg, "mel_filters": [[0.0] * 7] * 16})
    with pytest.raises(BundleError, match="malformed"):
        LogMelFeatures({**cfg, "hop_length": "fast"})


def test_wav_stereo_32bit_resampled_to_features(tmp_path: Path) -> None:
    """WAV decoding (PCM 16/32, stereo mixed to mono) and resampling feed the log-mel front-end."""
    fe = _hf(TINY)
    (tmp_path / "preprocessor_config.json").write_text(fe.to_json_string())
    pre = AudioPreprocessor({"preprocessor_config.json": tmp_path / "preprocessor_config.json"},
                            ["input_features"])
    assert pre.log_mel is not None
    rng = np.random.default_rng(5)
    stereo = np.clip(rng.standard_normal((12000, 2)) * 0.2, -1, 1)
    mono16 = np.clip(rng.standard_normal(16000) * 0.2, -1, 1)
    clips = [_wav(stereo, 24000, width=4), _wav(mono16, 16000, width=2)]
    out = pre(clips + [base64.b64encode(clips[1])])["input_features"]
    assert out.shape == (3, 16, 100) and out.dtype == np.float32
    # the same decode + resample, then transformers' extractor
    mixed = (np.round(stereo * np.iinfo(np.int32).max).astype(np.int32).astype(np.float32)
             / np.iinfo(np.int32).max).mean(axis=1)
    t = np.arange(8000) * 1.5  # 12000 samples at 24 kHz -> 8000 at 16 kHz
    resampled = np.interp(t, np.arange(len(mixed)), mixed.astype(np.float64)).astype(np.float32)
    m16 = np.round(mono16 * 32767).astype(np.int16).astype(np.float32) / 32767
    want = fe([resampled, m16], sampling_rate=16000, return_tensors="np")["input_features"]
    np.testing.assert_allclose(out[:2], want, atol=1e-4, rtol=0)
    np.testing.assert_allclose(out[2], out[1], atol=0)


@pytest.fixture(scope="module")
def whisper_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return export_sample(tmp_path_factory.mktemp("whisper"), "tiny-whisper", with_past=False)


def test_declare_raw_inputs_for_whisper(whisper_export) -> None:  # type: ignore[no-untyped-def]
    _, onnx_dir = whisper_export
    inputs = [{"name": "input_features", "datatype": "FP32", "shape": [-1, 16, 100]},
              {"name": "decoder_input_ids", "datatype": "INT64", "shape": [-1, -1]}]
    raw = declare_raw_inputs(inputs, onnx_dir, "model")
    assert raw == [{"name": "audio", "kind": "audio", "datatype": "BYTES", "produces": ["input_features"],
                    "files": ["model/processor_config.json"], "features": "whisper-log-mel"}]
    pre = build_preprocessors(declare_raw_inputs(inputs, onnx_dir), onnx_dir)["audio"]
    assert isinstance(pre.fn, AudioPreprocessor) and pre.fn.log_mel is not None
    # a 3-d input_features without a Whisper extractor is not declared (no front-end for it here)
    other = onnx_dir.parent / "not-whisper"
    other.mkdir(exist_ok=True)
    (other / "preprocessor_config.json").write_text(json.dumps(
        {"feature_extractor_type": "SeamlessM4TFeatureExtractor", "sampling_rate": 16000}))
    assert declare_raw_inputs(inputs, other) == []


def test_raw_wav_request_matches_ort_on_hf_features(whisper_export, signing_key, trust_file, token_file,
                                                    tmp_path):  # type: ignore[no-untyped-def]
    import onnxruntime as ort
    from transformers import AutoProcessor

    from studio.package.bundle import build_bundle
    from tests.edge.helpers import AgentProcess

    sample, onnx_dir = whisper_export
    bundle = Path(build_bundle(onnx_dir, "generic-x86_64", signing_key, tmp_path / "whisper.tar",
                               name="whisper", version="1").bundle)
    with tarfile.open(bundle) as tf:
        f = tf.extractfile("runtime.json")
        assert f is not None
        raw = {r["name"]: r for r in json.loads(f.read())["models"][0]["raw_inputs"]}
    assert raw["audio"]["produces"] == ["input_features"] and raw["audio"]["features"] == "whisper-log-mel"

    rng = np.random.default_rng(11)
    clips = [np.clip(rng.standard_normal(n) * 0.3, -1, 1) for n in (9000, 20000)]  # padded / truncated
    wavs = [_wav(c, 16000) for c in clips]
    decoder = np.array([[1, 4], [1, 7]], dtype=np.int64)
    proc = AutoProcessor.from_pretrained(sample)
    feats = proc.feature_extractor([np.round(c * 32767).astype(np.int16).astype(np.float32) / 32767 for c in clips],
                                   sampling_rate=16000, return_tensors="np")["input_features"]
    sess = ort.InferenceSession(str(onnx_dir / "model.onnx"), providers=["CPUExecutionProvider"])
    want = sess.run(["logits"], {"input_features": feats, "decoder_input_ids": decoder})[0]

    agent = AgentProcess(tmp_path / "data", trust_file, token_file).start()
    try:
        r = httpx.post(agent.url + "/agent/bundles", content=bundle.read_bytes(), timeout=120,
                       headers={"Authorization": f"Bearer {token_file.read_text().strip()}"})
        assert r.status_code == 200, r.text
        meta = httpx.get(agent.url + "/v2/models/whisper").json()
        assert [x["name"] for x in meta["raw_inputs"]] == ["audio"]
        req = {"inputs": [{"name": "audio", "datatype": "BYTES", "shape": [2],
                           "data": [base64.b64encode(w).decode() for w in wavs]},
                          {"name": "decoder_input_ids", "datatype": "INT64", "shape": [2, 2],
                           "data": decoder.ravel().tolist()}]}
        r = httpx.post(agent.url + "/v2/models/whisper/infer", json=req, timeout=60)
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        assert out["name"] == "logits"
        got = np.asarray(out["data"], np.float32).reshape(out["shape"])
        np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-3)

        bad = {"inputs": [{"name": "audio", "datatype": "BYTES", "shape": [1], "data": ["not a wav"]},
                          {"name": "decoder_input_ids", "datatype": "INT64", "shape": [1, 1], "data": [1]}]}
        r = httpx.post(agent.url + "/v2/models/whisper/infer", json=bad, timeout=60)
        assert r.status_code == 400 and "audio" in r.json()["error"]
    finally:
        agent.stop()

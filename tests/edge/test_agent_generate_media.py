"""Triton's generate extension on a real studio-agent process serving a VLM and a speech export (issue 14).

Two exports built from configs (no hub): tiny-qwen2-vl with its context raised to 4096 (a long generation lasts
seconds, so a stream can be closed while it surely runs) and tiny-whisper re-initialised with init_std 0.3 (its
greedy ids then depend on the clip), each packaged as a signed bundle; one agent with ``--max-generations 1``
serves both. /generate with a base64 PNG equals ``studio.generate.generate(export, prompt, image=...)``, the
stream joins to it, a WAV's transcript equals the local speech runtime's, closing a VLM stream frees the slot,
and bad media are 400s naming the field while the agent keeps serving.
"""

from __future__ import annotations

import base64
import io
import json
import tarfile
import wave
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.generate.api import generate  # noqa: E402
from tests.edge.helpers import AgentProcess, dev_keys  # noqa: E402
from tests.edge.test_agent_generate import _events, _metric, _wait_metric  # noqa: E402

CONTEXT = 4096
MAX_GENERATIONS = 1


def png(w: int, h: int, seed: int = 0, fmt: str = "PNG") -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)).save(buf, fmt)
    return buf.getvalue()


def wav(seconds: float, freq: float = 440.0, rate: int = 16000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    pcm = (0.5 * np.sin(2 * np.pi * freq * t) * 32767).astype(np.int16)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def export_vlm(root: Path) -> Path:
    """tiny-qwen2-vl with its context raised to CONTEXT, exported with its KV cache; the export folder."""
    from studio.export.api import ExportOptions, export_model, write_sample

    src = write_sample("tiny-qwen2-vl", root / "tiny-qwen2-vl")
    cfg = json.loads((src / "config.json").read_text())
    cfg["text_config"]["max_position_embeddings"] = CONTEXT
    (src / "config.json").write_text(json.dumps(cfg, indent=2))
    rep = export_model(ExportOptions(model_dir=src, output=root / "export" / "model.onnx"))
    assert rep.status == "succeeded", rep.diagnosis
    return root / "export"


def export_whisper(root: Path) -> Path:
    """tiny-whisper re-initialised with init_std 0.3, exported with its KV cache (the default); the export folder."""
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    from studio.export.api import ExportOptions, export_model, write_sample

    src = write_sample("tiny-whisper", root / "tiny-whisper")
    cfg = WhisperConfig.from_pretrained(src)
    cfg.init_std = 0.3  # the sample's 0.02 answers the same token whatever the clip
    torch.manual_seed(0)
    WhisperForConditionalGeneration(cfg).eval().save_pretrained(src)
    rep = export_model(ExportOptions(model_dir=src, output=root / "export" / "model.onnx"))
    assert rep.status == "succeeded", rep.diagnosis
    return root / "export"


@pytest.fixture(scope="module")
def vl_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_vlm(tmp_path_factory.mktemp("vl-serve"))


@pytest.fixture(scope="module")
def wh_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_whisper(tmp_path_factory.mktemp("wh-serve"))


@pytest.fixture(scope="module")
def signed(vl_export: Path, wh_export: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, dict]:
    """(dev keys, root, {"vl": bundle, "wh": bundle})."""
    from studio.package.bundle import build_bundle

    root = tmp_path_factory.mktemp("media-bundles")
    dev = dev_keys(root)
    out = {name: Path(build_bundle(src, "generic-x86_64", dev.signing_key, root / f"{name}.tar", name=name,
                                   version="1").bundle) for name, src in (("vl", vl_export), ("wh", wh_export))}
    return dev, root, out


@pytest.fixture(scope="module")
def bundles(signed: tuple[Any, Path, dict]) -> dict[str, Path]:
    return signed[2]


@pytest.fixture(scope="module")
def agent(signed: tuple[Any, Path, dict]):  # type: ignore[no-untyped-def]
    from studio.package.client import deploy_bundle

    dev, root, paths = signed
    a = AgentProcess(root / "data", dev.trust, dev.token, extra=["--max-generations", str(MAX_GENERATIONS)]).start()
    for name in ("vl", "wh"):
        deploy_bundle(paths[name], a.url, dev.token.read_text().strip())
    yield a
    a.stop()


def _post(agent: AgentProcess, model: str, body: object, stream: bool = False) -> httpx.Response:
    return httpx.post(f"{agent.url}/v2/models/{model}/generate{'_stream' if stream else ''}", json=body, timeout=60)


def test_bundles_carry_the_parts_and_runtime_json_marks_them(bundles: dict[str, Path]) -> None:
    want = {"vl": ("vlm", {"vision": "model/vision.onnx"}, {"model/preprocessor_config.json"}),
            "wh": ("encoder-decoder", {"encoder": "model/model_encoder.onnx"}, {"model/processor_config.json"})}
    for name, (kind, parts, configs) in want.items():
        with tarfile.open(bundles[name]) as tf:
            runtime = json.loads(tf.extractfile("runtime.json").read())  # type: ignore[union-attr]
            manifest = json.loads(tf.extractfile("manifest.json").read())  # type: ignore[union-attr]
        models = runtime["models"]
        assert [m["name"] for m in models] == [name]  # the parts run inside the generation model, not alone
        gen = models[0]["generation"]
        assert gen["kind"] == kind and gen["parts"] == parts
        signed = {f["path"] for f in manifest["files"]}
        assert {"model/generation.json", "model/tokenizer.json", *parts.values(), *configs} <= signed


def test_vlm_generate_equals_the_runtime_and_the_stream_joins_to_it(agent: AgentProcess, vl_export: Path) -> None:
    meta = httpx.get(agent.url + "/v2/models/vl").json()["generation"]
    assert meta["kind"] == "vlm" and meta["accepts"] == ["text_input", "image"]
    cases = [("describe the picture", png(20, 20)), ("what colour is the car?", png(40, 24, 1, "JPEG")),
             ("no image here", None)]
    for prompt, image in cases:
        want = generate(vl_export, prompt, image=image, max_new_tokens=12)
        body = {"text_input": prompt, "parameters": {"max_tokens": 12}, **({"image": b64(image)} if image else {})}
        r = _post(agent, "vl", body)
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["text_output"] == want.text and got["finish_reason"] == "length"
        assert got["usage"]["prompt_tokens"] == len(want.prompt_token_ids)  # image placeholders included
        assert got["usage"]["completion_tokens"] == 12
        events = _events(_post(agent, "vl", body, stream=True).text.splitlines())
        assert len(events) > 2 and "".join(e["text_output"] for e in events) == want.text
        assert events[-1]["usage"]["tokens_per_s"] > 0


def test_speech_transcript_equals_the_local_runtime(agent: AgentProcess, wh_export: Path) -> None:
    from studio.generate.speech import generate_speech

    meta = httpx.get(agent.url + "/v2/models/wh").json()["generation"]
    assert meta["kind"] == "encoder-decoder" and meta["audio"]["window_s"] == 1.0
    answers = set()
    for clip in (wav(0.5, 440), wav(0.9, 1500), wav(0.2, 90)):
        want = generate_speech(wh_export, clip, max_new_tokens=10)
        r = _post(agent, "wh", {"audio": b64(clip), "text_input": "", "max_tokens": 10})
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["text_output"] == want.text and got["usage"]["completion_tokens"] == len(want.token_ids)
        assert got["finish_reason"] == want.finish_reason
        events = _events(_post(agent, "wh", {"audio": b64(clip), "max_tokens": 10}, stream=True).text.splitlines())
        assert "".join(e["text_output"] for e in events) == want.text
        answers.add(tuple(want.token_ids))
    assert len(answers) > 1  # the transcript depends on the clip: the audio really reached the encoder
    maps = Path(f"/proc/{agent.proc.pid}/maps")  # type: ignore[union-attr]
    if maps.is_file():  # both media loops ran in the agent: numpy, PIL and ORT, never torch
        assert "libtorch" not in maps.read_text()


def test_plain_infer_runs_the_speech_decoder_alone(agent: AgentProcess, wh_export: Path) -> None:
    """/infer of a Whisper export is its decoder graph with its own tensors (the cross K/V from the bundle's
    encoder, run here) and equals ORT; the audio it does not take is a 400 that points to /generate."""
    import onnxruntime as ort

    enc, dec = (ort.InferenceSession(str(wh_export / f), providers=["CPUExecutionProvider"])
                for f in ("model_encoder.onnx", "model.onnx"))
    feats = np.random.default_rng(3).standard_normal((1, 16, 100)).astype(np.float32)
    cross = dict(zip([o.name for o in enc.get_outputs()], enc.run(None, {"input_features": feats}), strict=True))
    past = 2
    feed = {"input_ids": np.array([[350]], np.int64), "attention_mask": np.ones((1, past + 1), np.int64),
            "position_ids": np.array([[past]], np.int64)}
    for i in dec.get_inputs()[3:]:
        feed[i.name] = cross[i.name.replace("past_key_values", "present")] if ".encoder." in i.name else \
            np.random.default_rng(4).standard_normal((1, i.shape[1], past, i.shape[3])).astype(np.float32)
    want = dec.run(["logits"], feed)[0]
    body = {"inputs": [{"name": k, "datatype": "INT64" if v.dtype == np.int64 else "FP32", "shape": list(v.shape),
                        "data": v.ravel().tolist()} for k, v in feed.items()], "outputs": [{"name": "logits"}]}
    r = httpx.post(agent.url + "/v2/models/wh/infer", json=body, timeout=60)
    assert r.status_code == 200, r.text
    out = r.json()["outputs"][0]
    np.testing.assert_allclose(np.asarray(out["data"], np.float32).reshape(out["shape"]), want, atol=1e-5)
    bad = {"inputs": [{"name": "audio", "datatype": "BYTES", "shape": [1], "data": [b64(wav(0.3))]}]}
    r = httpx.post(agent.url + "/v2/models/wh/infer", json=bad, timeout=60)
    assert r.status_code == 400 and "'audio'" in r.json()["error"] and "/v2/models/wh/generate" in r.json()["error"]


def test_closing_a_vlm_stream_frees_the_slot(agent: AgentProcess, vl_export: Path) -> None:
    url = agent.url
    before = _metric(url, "studio_agent_generate_finished_total", model="vl", reason="cancelled")
    body = {"text_input": "describe", "image": b64(png(20, 20)), "parameters": {"max_tokens": CONTEXT - 64}}
    with httpx.stream("POST", url + "/v2/models/vl/generate_stream", json=body, timeout=60) as s:
        lines = s.iter_lines()  # held: a dropped generator closes the response, which cancels at once
        chunks = 0
        for line in lines:
            chunks += line.startswith("data: ")
            if chunks == 2:
                break
        r = _post(agent, "vl", {"text_input": "hi", "max_tokens": 2})
        assert r.status_code == 503 and "--max-generations" in r.json()["error"]
    _wait_metric(url, "studio_agent_generate_finished_total", before + 1, model="vl", reason="cancelled")
    r = _post(agent, "vl", {"text_input": "count", "image": b64(png(32, 32, 2)), "max_tokens": 6})
    assert r.status_code == 200, r.text
    assert r.json()["text_output"] == generate(vl_export, "count", image=png(32, 32, 2), max_new_tokens=6).text


@pytest.mark.parametrize(("model", "body", "field", "words"), [
    ("vl", {"text_input": "x", "image": b64(b"plain text, not a picture")}, "image", "not an image"),
    ("vl", {"text_input": "x", "image": b64(png(20, 20)[:80])}, "image", "truncated"),
    ("vl", {"text_input": "x", "image": "%%% not base64"}, "image", "base64"),
    ("vl", {"text_input": "x", "image": b64(png(600, 2))}, "image", "aspect ratio"),
    ("vl", {"text_input": "x", "audio": b64(wav(0.2))}, "audio", "takes no audio"),
    ("vl", {"image": b64(png(20, 20)), "text_input": "hi " * CONTEXT}, "text_input", "maximum context"),
    ("vl", {"text_input": "x", "image": b64(png(20, 20)), "max_tokens": 0}, "max_tokens", ">= 1"),
    ("wh", {"audio": b64(wav(1.5))}, "audio", "window"),
    ("wh", {"audio": b64(png(20, 20))}, "audio", "WAV"),
    ("wh", {"audio": b64(wav(0.2)), "image": b64(png(20, 20))}, "image", "takes no image"),
    ("wh", {"text_input": "hello"}, "text_input", "no text prompt"),
    ("wh", {"max_tokens": 3}, "audio", "no 'audio'"),
])
def test_bad_media_is_a_400_naming_the_field(agent: AgentProcess, model: str, body: dict, field: str,
                                             words: str) -> None:
    r = _post(agent, model, body, stream=model == "wh")
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["field"] == field and words in err["error"] and err["hint"], err
    ok = _post(agent, model, {"text_input": "hi", "image": b64(png(20, 20)), "max_tokens": 3} if model == "vl"
               else {"audio": b64(wav(0.3)), "max_tokens": 3})
    assert ok.status_code == 200 and ok.json()["usage"]["completion_tokens"] >= 1

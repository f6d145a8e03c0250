"""Triton's own generate endpoints on a real tritonserver serving the repository the studio builds from a VLM
(tiny-qwen2-vl) and a speech (tiny-whisper) KV-cache export: the same decoupled pymodel, the agent's loop and checks.

``image`` / ``audio`` are BYTES inputs: a generate body's JSON string (base64 of the file) or, over gRPC with
tritonclient, the raw file bytes; both must answer what ``studio.generate`` answers on the same export.
"""

from __future__ import annotations

import json
import queue
from pathlib import Path

import httpx
import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.generate.api import generate  # noqa: E402
from studio.triton.repo_builder import BuildOptions, build_repo  # noqa: E402
from studio.triton.repo_check import check_repo  # noqa: E402
from studio.triton.server import LocalTritonServer  # noqa: E402
from tests.edge.test_agent_generate_media import b64, export_vlm, export_whisper, png, wav  # noqa: E402

pytestmark = [pytest.mark.triton, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def vl_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_vlm(tmp_path_factory.mktemp("triton-vl"))


@pytest.fixture(scope="module")
def wh_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_whisper(tmp_path_factory.mktemp("triton-wh"))


@pytest.fixture(scope="module")
def server(vl_export: Path, wh_export: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    repo = tmp_path_factory.mktemp("media-repo")
    for name, src in (("vl", vl_export), ("wh", wh_export)):
        report = build_repo(BuildOptions(src, repo, name))
        assert report.entry_model == name and [m.kind for m in report.models] == ["generate"]
    assert (repo / "vl" / "1" / "vision.onnx").is_file() and (repo / "vl" / "1" / "preprocessor_config.json").is_file()
    assert (repo / "wh" / "1" / "model_encoder.onnx").is_file() and (repo / "wh" / "1" / "processor_config.json").is_file()
    check = check_repo(repo)
    assert check.ok, [f.render() for f in check.findings]
    srv = LocalTritonServer(repo, model_control_mode="explicit", load_models=["vl", "wh"])
    srv.start()
    yield srv
    srv.stop()
    srv.cleanup()


def _stream(url: str, body: dict) -> list[dict]:
    with httpx.stream("POST", url, json={**body, "stream": True}, timeout=60) as s:
        assert s.status_code == 200, s.read()
        return [json.loads(line[6:]) for line in s.iter_lines() if line.startswith("data: ")]


def test_vlm_generate_and_stream_equal_the_studio_runtime(server: LocalTritonServer, vl_export: Path) -> None:
    url = server.http_url + "/v2/models/vl"
    for prompt, image in (("describe the picture", png(20, 20)), ("what colour?", png(40, 24, 1, "JPEG"))):
        want = generate(vl_export, prompt, image=image, max_new_tokens=12).text
        body = {"text_input": prompt, "image": b64(image), "parameters": {"max_tokens": 12}}
        r = httpx.post(url + "/generate", json=body, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["text_output"] == want
        events = _stream(url + "/generate_stream", body)
        assert len(events) > 2 and "".join(e.get("text_output", "") for e in events) == want


def test_speech_over_http_base64_and_grpc_raw_bytes(server: LocalTritonServer, wh_export: Path) -> None:
    import tritonclient.grpc as grpcclient

    from studio.generate.speech import generate_speech

    cfg = httpx.get(server.http_url + "/v2/models/wh/config").json()
    assert {i["name"]: i["optional"] for i in cfg["input"]}["text_input"] is True  # Whisper takes no prompt
    clip = wav(0.6, 880)
    want = generate_speech(wh_export, clip, max_new_tokens=10).text
    r = httpx.post(server.http_url + "/v2/models/wh/generate", json={"audio": b64(clip), "max_tokens": 10},
                   timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["text_output"] == want
    got: queue.Queue = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_url.removeprefix("grpc://"))
    inputs = [grpcclient.InferInput("audio", [1], "BYTES"), grpcclient.InferInput("max_tokens", [1], "INT32")]
    inputs[0].set_data_from_numpy(np.array([clip], dtype=np.object_))  # the WAV file itself, not base64
    inputs[1].set_data_from_numpy(np.array([10], dtype=np.int32))
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer("wh", inputs)
    result, error = got.get(timeout=60)
    client.stop_stream()
    client.close()
    assert error is None, error
    assert result.as_numpy("text_output")[0].decode() == want


@pytest.mark.parametrize(("model", "body", "field"), [
    ("vl", {"text_input": "x", "image": b64(b"plain text, not a picture")}, "image"),
    ("vl", {"text_input": "x", "audio": b64(wav(0.2))}, "audio"),
    ("wh", {"audio": b64(wav(1.5))}, "audio"),
    ("wh", {"audio": b64(wav(0.2)), "image": b64(png(20, 20))}, "image"),
])
def test_bad_media_is_a_400_naming_the_field(server: LocalTritonServer, model: str, body: dict, field: str) -> None:
    r = httpx.post(f"{server.http_url}/v2/models/{model}/generate", json=body, timeout=60)
    assert r.status_code == 400, r.text
    assert f"field '{field}'" in r.json()["error"]
    ok = {"text_input": "hi", "image": b64(png(20, 20))} if model == "vl" else {"audio": b64(wav(0.3))}
    r = httpx.post(f"{server.http_url}/v2/models/{model}/generate", json={**ok, "max_tokens": 2}, timeout=60)
    assert r.status_code == 200 and r.json()["text_output"] is not None

"""Triton's own generate endpoints on a real tritonserver (CPU, Python backend) serving the repository the studio
builds from a KV-cache export: one decoupled model answering ``/generate`` and ``/generate_stream``.

The text must equal ``studio.generate.generate()`` on the same export (the pymodel runs the studio's loop from
the venv); a gRPC stream cancelled by the client stops the generation between tokens (``is_cancelled()``).
"""

from __future__ import annotations

import json
import queue
import time
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
from tests.serving.generation_export import CONTEXT, export_long_context  # noqa: E402

pytestmark = [pytest.mark.triton, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_long_context(tmp_path_factory.mktemp("triton-gen"))


@pytest.fixture(scope="module")
def server(export_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    repo = tmp_path_factory.mktemp("gen-repo")
    report = build_repo(BuildOptions(export_dir, repo, "qwen"))
    assert report.entry_model == "qwen" and [m.kind for m in report.models] == ["generate"]
    from studio.package.keys import KeyStore  # a signed version: model.py verifies it before loading

    keys = KeyStore(tmp_path_factory.mktemp("gen-keys"))
    keys.generate("release", "pw")
    build_repo(BuildOptions(export_dir, repo, "qwen_signed", sign_key=keys.load_signing_key("release", "pw"),
                            trust=[str(keys.public_path("release"))]))
    check = check_repo(repo)
    assert check.ok, [f.render() for f in check.findings]
    srv = LocalTritonServer(repo, model_control_mode="explicit", load_models=["qwen", "qwen_signed"])
    srv.start()
    yield srv
    srv.stop()
    srv.cleanup()


def test_config_is_a_decoupled_python_model(server: LocalTritonServer) -> None:
    cfg = httpx.get(server.http_url + "/v2/models/qwen/config").json()
    assert cfg["backend"] == "python" and cfg["model_transaction_policy"]["decoupled"] is True
    names = {i["name"]: i for i in cfg["input"]}
    assert names["text_input"]["data_type"] == "TYPE_STRING" and names["max_tokens"]["optional"] is True
    assert cfg["output"][0]["name"] == "text_output" and cfg["output"][0]["data_type"] == "TYPE_STRING"


def test_generate_and_generate_stream_equal_the_studio_runtime(server: LocalTritonServer, export_dir: Path) -> None:
    url = server.http_url
    for prompt in ("hello world", "the quick brown fox"):
        want = generate(export_dir, prompt, max_new_tokens=16).text
        r = httpx.post(url + "/v2/models/qwen/generate",
                       json={"text_input": prompt, "parameters": {"max_tokens": 16, "temperature": 0}}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["model_name"] == "qwen" and r.json()["text_output"] == want
        signed = httpx.post(url + "/v2/models/qwen_signed/generate", json={"text_input": prompt, "max_tokens": 16},
                            timeout=60)
        assert signed.status_code == 200 and signed.json()["text_output"] == want
        with httpx.stream("POST", url + "/v2/models/qwen/generate_stream",
                          json={"text_input": prompt, "max_tokens": 16, "stream": True}, timeout=60) as s:
            assert s.status_code == 200 and s.headers["content-type"].startswith("text/event-stream")
            events = [json.loads(line[6:]) for line in s.iter_lines() if line.startswith("data: ")]
        assert len(events) > 2, events
        assert "".join(e.get("text_output", "") for e in events) == want


@pytest.mark.parametrize(("body", "field"), [
    ({"text_input": "hello", "max_tokens": 0}, "max_tokens"),
    ({"text_input": "hello", "parameters": {"max_tokens": -1}}, "max_tokens"),
    ({"text_input": "x" + " hi" * CONTEXT}, "text_input"),
    ({"text_input": "hello", "image": "aGVsbG8="}, "image"),
])
def test_bad_input_is_a_400_naming_the_field(server: LocalTritonServer, body: dict, field: str) -> None:
    r = httpx.post(server.http_url + "/v2/models/qwen/generate", json=body, timeout=60)
    assert r.status_code == 400, r.text
    assert f"field '{field}'" in r.json()["error"]
    ok = httpx.post(server.http_url + "/v2/models/qwen/generate", json={"text_input": "hi", "max_tokens": 2},
                    timeout=60)
    assert ok.status_code == 200 and ok.json()["text_output"]


def test_a_cancelled_grpc_stream_stops_between_tokens(server: LocalTritonServer, export_dir: Path) -> None:
    import tritonclient.grpc as grpcclient

    got: queue.Queue = queue.Queue()
    client = grpcclient.InferenceServerClient(server.grpc_url.removeprefix("grpc://"))
    inputs = [grpcclient.InferInput("text_input", [1], "BYTES"), grpcclient.InferInput("max_tokens", [1], "INT32"),
              grpcclient.InferInput("stream", [1], "BOOL")]
    inputs[0].set_data_from_numpy(np.array([b"hello"], dtype=np.object_))
    inputs[1].set_data_from_numpy(np.array([CONTEXT - 10], dtype=np.int32))
    inputs[2].set_data_from_numpy(np.array([True]))
    client.start_stream(callback=lambda result, error: got.put((result, error)))
    client.async_stream_infer("qwen", inputs)
    for _ in range(2):
        result, error = got.get(timeout=60)
        assert error is None and result.as_numpy("text_output") is not None
    client.stop_stream(cancel_requests=True)
    client.close()
    deadline = time.monotonic() + 60
    while "studio generate: request cancelled after" not in server.log_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "studio generate: request cancelled after" in server.log_text(), server.log_tail(30)
    r = httpx.post(server.http_url + "/v2/models/qwen/generate", json={"text_input": "hello world", "max_tokens": 8},
                   timeout=60)
    assert r.status_code == 200 and r.json()["text_output"] == generate(export_dir, "hello world",
                                                                         max_new_tokens=8).text


def test_closing_an_http_generate_stream_cancels_it(server: LocalTritonServer) -> None:
    """Triton cancels the request of a client that closes its generate_stream; the model stops between tokens."""
    marker = "studio generate: request cancelled after"
    before = server.log_text().count(marker)
    with httpx.stream("POST", server.http_url + "/v2/models/qwen/generate_stream",
                      json={"text_input": "hello", "max_tokens": CONTEXT - 10, "stream": True}, timeout=60) as s:
        chunks = 0
        for line in s.iter_lines():
            chunks += line.startswith("data: ")
            if chunks == 2:
                break
    deadline = time.monotonic() + 60
    while server.log_text().count(marker) <= before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.log_text().count(marker) == before + 1, server.log_tail(30)
    ok = httpx.post(server.http_url + "/v2/models/qwen/generate", json={"text_input": "hi", "max_tokens": 2},
                    timeout=60)
    assert ok.status_code == 200


def test_the_generate_load_and_client_on_triton(server: LocalTritonServer, export_dir: Path) -> None:
    """The studio's generate client and load generator speak to Triton's generate_stream as to the agent: the
    stream comes piece by piece (TTFT measurable), tokens counted from the pieces (Triton sends no usage)."""
    from studio.telemetry.bench import run_bench
    from studio.telemetry.genload import GenerateLoadGenerator
    from studio.telemetry.load_types import GenerationLoad, LoadConfig
    from studio.triton.generate_client import generate_body, stream_generate

    pieces: list[str] = []
    ans = stream_generate(server.http_url, "qwen", generate_body("hello world", max_tokens=8), pieces.append)
    assert ans.text == generate(export_dir, "hello world", max_new_tokens=8).text
    assert len(pieces) > 1 and ans.ttft_ms is not None and ans.tokens == len(pieces)
    cfg = LoadConfig(url=server.http_url, model="qwen", concurrency=[1], duration_s=1.0, warmup_s=0.2,
                     window_s=0.5, stability=False, generation=GenerationLoad(prompts=["hello world"], max_tokens=6))
    lv = run_bench(cfg, generator=GenerateLoadGenerator).levels[0]
    assert lv.successes > 0 and lv.error_count == 0
    assert lv.generation.token_source == "stream pieces counted" and lv.generation.ttft.count == lv.successes

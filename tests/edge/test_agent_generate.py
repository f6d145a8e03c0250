"""Triton's generate extension on a real studio-agent process serving a tiny Qwen2 exported with its KV cache.

One export (tiny-qwen2 from its config, context raised to 4096 so a long generation lasts seconds, not
milliseconds), one signed bundle, one agent started with ``--max-generations 1`` for the module: greedy text
equals ``studio.generate.generate()`` on the same export, the stream's pieces join to it, a client that goes
away frees the slot, and bad requests are 400s naming the field while the agent goes on serving.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.generate.api import generate  # noqa: E402
from tests.edge.helpers import AgentProcess, dev_keys  # noqa: E402
from tests.serving.generation_export import CONTEXT, export_long_context  # noqa: E402

PROMPTS = ["hello world", "the quick brown fox", "a"]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_long_context(tmp_path_factory.mktemp("gen-serve"))


@pytest.fixture(scope="module")
def agent(export_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle

    root = tmp_path_factory.mktemp("gen-agent")
    dev = dev_keys(root)
    rep = build_bundle(export_dir, "generic-x86_64", dev.signing_key, root / "qwen.tar", name="qwen", version="1")
    a = AgentProcess(root / "data", dev.trust, dev.token, extra=["--max-generations", "1"]).start()
    deploy_bundle(Path(rep.bundle), a.url, dev.token.read_text().strip())
    a.dev = dev  # type: ignore[attr-defined]
    yield a
    a.stop()


def _events(lines: list[str]) -> list[dict]:
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def _metric(url: str, name: str, **labels: str) -> float:
    text = httpx.get(url + "/metrics").text
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(rf"^{name}\{{(.*)\}} (\S+)$", line)
        if m and ",".join(sorted(m.group(1).split(","))) == want:
            return float(m.group(2))
    return 0.0


def _wait_metric(url: str, name: str, at_least: float, **labels: str) -> float:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        v = _metric(url, name, **labels)
        if v >= at_least:
            return v
        time.sleep(0.05)
    raise AssertionError(f"{name}{labels} never reached {at_least}")


def test_bundle_marks_generation_and_signs_its_files(export_dir: Path, tmp_path: Path) -> None:
    import tarfile

    from studio.edge.verify import extract_verified
    from studio.package.bundle import build_bundle

    dev = dev_keys(tmp_path)
    rep = build_bundle(export_dir, "generic-x86_64", dev.signing_key, tmp_path / "b.tar", name="g", version="1")
    with tarfile.open(rep.bundle) as tf:
        runtime = json.loads(tf.extractfile("runtime.json").read())  # type: ignore[union-attr]
        manifest = json.loads(tf.extractfile("manifest.json").read())  # type: ignore[union-attr]
    gen = runtime["models"][0]["generation"]
    assert gen["kind"] == "decoder-only" and gen["model_type"] == "qwen2" and gen["max_context"] == CONTEXT
    signed = {f["path"] for f in manifest["files"]}
    assert {"model/generation.json", "model/genai_config.json", "model/tokenizer.json"} <= signed
    from studio.edge.trust import load_trusted_keys

    extract_verified(Path(rep.bundle), tmp_path / "out", load_trusted_keys(dev.trust))  # signature covers them


def test_generate_equals_the_runtime_and_the_stream_joins_to_it(agent: AgentProcess, export_dir: Path) -> None:
    for prompt in PROMPTS:
        want = generate(export_dir, prompt, max_new_tokens=20).text
        r = httpx.post(agent.url + "/v2/models/qwen/generate",
                       json={"text_input": prompt, "parameters": {"max_tokens": 20, "temperature": 0}})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["model_name"] == "qwen" and body["model_version"] == "1"
        assert body["text_output"] == want
        assert body["usage"]["completion_tokens"] == 20 and body["finish_reason"] == "length"
        with httpx.stream("POST", agent.url + "/v2/models/qwen/generate_stream",
                          json={"text_input": prompt, "max_tokens": 20}) as s:
            assert s.status_code == 200 and s.headers["content-type"].startswith("text/event-stream")
            events = _events(list(s.iter_lines()))
        assert len(events) > 2
        assert "".join(e["text_output"] for e in events) == want
        last = events[-1]
        assert last["finish_reason"] == "length" and last["usage"]["prompt_tokens"] > 0
        assert last["usage"]["ttft_ms"] > 0 and last["usage"]["tokens_per_s"] > 0


def test_cancel_frees_the_slot_and_the_cap_answers_503(agent: AgentProcess, export_dir: Path) -> None:
    url = agent.url
    before = _metric(url, "studio_agent_generate_finished_total", model="qwen", reason="cancelled")
    with httpx.stream("POST", url + "/v2/models/qwen/generate_stream",
                      json={"text_input": "hello", "parameters": {"max_tokens": CONTEXT - 10}}) as s:
        lines = s.iter_lines()
        chunks = 0
        for line in lines:
            if line.startswith("data: "):
                chunks += 1
            if chunks == 2:
                break
        # the one slot (--max-generations 1) is taken: a second generation is refused, not queued
        r = httpx.post(url + "/v2/models/qwen/generate", json={"text_input": "hi", "max_tokens": 2})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert "--max-generations" in r.json()["error"]
    # the client closed after 2 chunks: the generation stops at its next token and frees the slot
    _wait_metric(url, "studio_agent_generate_finished_total", before + 1, model="qwen", reason="cancelled")
    tokens = _metric(url, "studio_agent_generate_output_tokens_total", model="qwen")
    r = httpx.post(url + "/v2/models/qwen/generate", json={"text_input": "hello world", "max_tokens": 8})
    assert r.status_code == 200, r.text
    assert r.json()["text_output"] == generate(export_dir, "hello world", max_new_tokens=8).text
    assert _metric(url, "studio_agent_generate_output_tokens_total", model="qwen") == tokens + 8
    assert _metric(url, "studio_agent_generate_requests_total", model="qwen", outcome="overloaded") >= 1


@pytest.mark.parametrize(("body", "field"), [
    ({"text_input": "x" + " hi" * CONTEXT}, "text_input"),
    ({"text_input": "hello", "parameters": {"max_tokens": 0}}, "max_tokens"),
    ({"text_input": "hello", "max_new_tokens": -1}, "max_new_tokens"),
    ({"text_input": "hello", "image": "aGVsbG8="}, "image"),
    ({"text_input": "hello", "audio": "aGVsbG8="}, "audio"),
    ({"text_input": 3}, "text_input"),
    ({"text_input": "hello", "parameters": {"temperature": "hot"}}, "temperature"),
    ({"text_input": "hello", "parameters": {"top_p": 2.0}}, "top_p"),
    ({"text_input": "hello", "parameters": {"max_tokens": True}}, "max_tokens"),
    ({"text_input": "hello", "prompt": "x"}, "prompt"),
    ([1, 2], "body"),
])
def test_bad_input_is_a_400_naming_the_field(agent: AgentProcess, body: object, field: str) -> None:
    r = httpx.post(agent.url + "/v2/models/qwen/generate", json=body)
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["field"] == field and err["error"] and err["hint"]
    ok = httpx.post(agent.url + "/v2/models/qwen/generate_stream", json={"text_input": "hello", "max_tokens": 3})
    assert ok.status_code == 200 and _events(ok.text.splitlines())[-1]["usage"]["completion_tokens"] == 3


def test_unknown_model_and_stop_strings(agent: AgentProcess, export_dir: Path) -> None:
    r = httpx.post(agent.url + "/v2/models/nope/generate", json={"text_input": "hello"})
    assert r.status_code == 404 and "nope" in r.json()["error"]
    assert _metric(agent.url, "studio_agent_generate_requests_total", model="unknown", outcome="unknown_model") >= 1
    # the agent's ASGI fast path parses these paths itself: the version form, a wrong method, a malformed path
    r = httpx.post(agent.url + "/v2/models/qwen/versions/1/generate", json={"text_input": "hello", "max_tokens": 2})
    assert r.status_code == 200 and r.json()["model_version"] == "1"
    r = httpx.post(agent.url + "/v2/models/qwen/versions/9/generate_stream", json={"text_input": "hello"})
    assert r.status_code == 404
    r = httpx.get(agent.url + "/v2/models/qwen/generate")
    assert r.status_code == 405 and r.headers["allow"] == "POST" and "POST" in r.json()["error"]
    assert httpx.post(agent.url + "/v2/models//generate", json={"text_input": "hi"}).status_code == 404
    full = generate(export_dir, "hello world", max_new_tokens=20).text
    stop = full[len(full) // 2:len(full) // 2 + 2]
    r = httpx.post(agent.url + "/v2/models/qwen/generate",
                   json={"text_input": "hello world", "parameters": {"max_tokens": 20, "stop": [stop]}})
    assert r.status_code == 200
    assert r.json()["text_output"] == full[:full.find(stop)] and r.json()["finish_reason"] == "stop"


def test_inference_token_two_concurrent_generations_and_no_torch(export_dir: Path, tmp_path: Path) -> None:
    """With --infer-token-file the generate routes need the token, as /infer does; the default cap (2) runs two
    generations at once, each with the reference text; the agent process never loads torch."""
    from concurrent.futures import ThreadPoolExecutor

    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle
    from tests.edge.helpers import write_token

    dev = dev_keys(tmp_path)
    infer_token = write_token(tmp_path / "infer.token")
    rep = build_bundle(export_dir, "generic-x86_64", dev.signing_key, tmp_path / "q.tar", name="qwen", version="1")
    a = AgentProcess(tmp_path / "data", dev.trust, dev.token, extra=["--infer-token-file", str(infer_token)]).start()
    try:
        deploy_bundle(Path(rep.bundle), a.url, dev.token.read_text().strip())
        body = {"text_input": "hello world", "max_tokens": 24}
        r = httpx.post(a.url + "/v2/models/qwen/generate_stream", json=body)
        assert r.status_code == 401 and "token" in r.json()["error"]
        auth = {"authorization": f"Bearer {infer_token.read_text().strip()}"}
        meta = httpx.get(a.url + "/v2/models/qwen", headers=auth).json()
        assert meta["generation"]["kind"] == "decoder-only" and meta["generation"]["max_context"] == CONTEXT
        want = generate(export_dir, "hello world", max_new_tokens=24).text
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: httpx.post(a.url + "/v2/models/qwen/generate", json=body,
                                                         headers=auth, timeout=60), range(2)))
        assert [x.status_code for x in answers] == [200, 200]
        assert [x.json()["text_output"] for x in answers] == [want, want]
        maps = Path(f"/proc/{a.proc.pid}/maps")  # type: ignore[union-attr]
        if maps.is_file():
            assert "libtorch" not in maps.read_text()
    finally:
        a.stop()


def test_an_export_kind_the_agent_cannot_run_yet_installs_without_generate(export_dir: Path, tmp_path: Path) -> None:
    import shutil

    from studio.generate.requests import GenerateInputError
    from studio.generate.serving import load_generation

    other = tmp_path / "diffusion"  # "vlm" and "encoder-decoder" are served (tests/edge/test_agent_generate_media.py)
    shutil.copytree(export_dir, other)
    raw = json.loads((other / "generation.json").read_text())
    (other / "generation.json").write_text(json.dumps({**raw, "kind": "diffusion"}))
    g = load_generation(other)
    assert g.describe() == {"kind": "diffusion", "model_type": "qwen2", "served": False} and g.warmup() == 0.0
    with pytest.raises(GenerateInputError) as err:
        g.parse({"text_input": "hello", "image": "aGVsbG8="})
    assert err.value.field == "model" and "'diffusion'" in err.value.message


def test_stop_strings_hold_a_tail_that_may_begin_one() -> None:
    from studio.generate.requests import StopStrings

    s = StopStrings(["END"])
    assert [s.feed(p) for p in ("ab", "cE", "N", "xyz")] == ["ab", "c", "", "ENxyz"] and not s.hit
    s = StopStrings(["END"])
    assert [s.feed(p) for p in ("abE", "ND", "more")] == ["ab", "", ""] and s.hit and s.flush() == ""


def test_a_bundle_without_the_generation_mark_is_detected_on_install(agent: AgentProcess, export_dir: Path,
                                                                      tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundle packaged before runtime.json carried "generation": generation.json naming the model is enough."""
    import tarfile

    import studio.package.bundle as bundle
    from studio.package.client import deploy_bundle

    monkeypatch.setattr(bundle, "_generation_of", lambda *_a: {})
    dev = agent.dev  # type: ignore[attr-defined]
    rep = bundle.build_bundle(export_dir, "generic-x86_64", dev.signing_key, tmp_path / "old.tar", name="old",
                              version="1")
    with tarfile.open(rep.bundle) as tf:
        assert "generation" not in json.loads(tf.extractfile("runtime.json").read())["models"][0]  # type: ignore
    deploy_bundle(Path(rep.bundle), agent.url, dev.token.read_text().strip())
    r = httpx.post(agent.url + "/v2/models/old/generate", json={"text_input": "hello world", "max_tokens": 6})
    assert r.status_code == 200 and r.json()["text_output"] == generate(export_dir, "hello world",
                                                                         max_new_tokens=6).text

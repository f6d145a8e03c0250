"""The staged pipeline: the exported tiny-clip packaged, deployed to a real agent, served from raw image + text
requests (KServe v2 BYTES, JSON and binary), matching ONNX Runtime on the HF processor's tensors; per-stage
metrics; traces to a real OTLP receiver."""

from __future__ import annotations

import base64
import io
import json
import struct
import tarfile
from pathlib import Path

import httpx
import numpy as np
import pytest

from studio.package.bundle import build_bundle
from tests.edge.helpers import AgentProcess, export_sample
from tests.telemetry.otlp_receiver import OtlpReceiver

pytestmark = pytest.mark.export

TEXTS = ["a photo of a cat", "two small dogs on the green grass near a house"]


@pytest.fixture(scope="module")
def clip_export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return export_sample(tmp_path_factory.mktemp("clip"), "tiny-clip")


def _images() -> list[bytes]:
    from PIL import Image

    rng = np.random.default_rng(7)
    out = []
    for (h, w), fmt in (((48, 64), "PNG"), ((50, 40), "JPEG")):
        img = Image.fromarray((rng.random((h, w, 3)) * 255).astype(np.uint8))
        buf = io.BytesIO()
        img.save(buf, format=fmt)
        out.append(buf.getvalue())
    return out


def _reference(sample: Path, onnx_dir: Path, images: list[bytes]) -> dict[str, np.ndarray]:
    import onnxruntime as ort
    from PIL import Image
    from transformers import AutoProcessor

    proc = AutoProcessor.from_pretrained(sample)
    enc = proc(text=TEXTS, images=[Image.open(io.BytesIO(b)) for b in images], return_tensors="np", padding=True)
    sess = ort.InferenceSession(str(onnx_dir / "model.onnx"), providers=["CPUExecutionProvider"])
    feed = {i.name: np.asarray(enc[i.name]) for i in sess.get_inputs()}
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feed), strict=True))


def _binary_request(images: list[bytes], texts: list[str]) -> tuple[bytes, int]:
    blobs, inputs = [], []
    for name, items in (("image", images), ("text", [t.encode() for t in texts])):
        raw = b"".join(struct.pack("<I", len(b)) + b for b in items)
        inputs.append({"name": name, "datatype": "BYTES", "shape": [len(items)],
                       "parameters": {"binary_data_size": len(raw)}})
        blobs.append(raw)
    head = json.dumps({"inputs": inputs, "parameters": {"binary_data_output": True}}).encode()
    return head + b"".join(blobs), len(head)


def _decode_binary(body: bytes, hlen: int) -> dict[str, np.ndarray]:
    head = json.loads(body[:hlen])
    out, off = {}, hlen
    for o in head["outputs"]:
        n = o["parameters"]["binary_data_size"]
        out[o["name"]] = np.frombuffer(body[off:off + n], dtype=np.float32).reshape(o["shape"])
        off += n
    return out


def _deploy(agent: AgentProcess, bundle: Path, token_file: Path) -> None:
    r = httpx.post(agent.url + "/agent/bundles", content=bundle.read_bytes(), timeout=120,
                   headers={"Authorization": f"Bearer {token_file.read_text().strip()}"})
    assert r.status_code == 200, r.text


def _package(onnx_dir: Path, signing_key, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    bundle = Path(build_bundle(onnx_dir, "generic-x86_64", signing_key, tmp_path / "clip.tar", name="clip",
                               version="1").bundle)
    with tarfile.open(bundle) as tf:
        f = tf.extractfile("runtime.json")
        assert f is not None
        runtime = json.loads(f.read())
    raw = {r["name"]: r for r in runtime["models"][0]["raw_inputs"]}
    assert raw["text"]["produces"] == ["input_ids", "attention_mask"] and raw["text"]["kind"] == "text"
    assert raw["image"]["produces"] == ["pixel_values"] and "model/processor_config.json" in raw["image"]["files"]
    return bundle


def test_raw_image_and_text_match_ort_on_processor_tensors(clip_export, signing_key, trust_file, token_file,
                                                           tmp_path):  # type: ignore[no-untyped-def]
    sample, onnx_dir = clip_export
    bundle = _package(onnx_dir, signing_key, tmp_path)
    images = _images()
    ref = _reference(sample, onnx_dir, images)
    with OtlpReceiver() as rx:
        agent = AgentProcess(tmp_path / "data", trust_file, token_file,
                             extra=["--otlp-endpoint", rx.url, "--pre-workers", "2"]).start()
        try:
            _deploy(agent, bundle, token_file)
            meta = httpx.get(agent.url + "/v2/models/clip").json()
            assert {r["name"] for r in meta["raw_inputs"]} == {"image", "text"}

            # binary extension: the image files and UTF-8 texts as BYTES tensors
            body, hlen = _binary_request(images, TEXTS)
            r = httpx.post(agent.url + "/v2/models/clip/infer", content=body, timeout=60,
                           headers={"Inference-Header-Content-Length": str(hlen),
                                    "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
            assert r.status_code == 200, r.text
            got = _decode_binary(r.content, int(r.headers["inference-header-content-length"]))
            for name, want in ref.items():
                np.testing.assert_allclose(got[name], want, atol=1e-4, rtol=1e-3, err_msg=name)

            # JSON: images base64, texts plain; a selected output
            req = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [2],
                               "data": [base64.b64encode(b).decode() for b in images]},
                              {"name": "text", "datatype": "BYTES", "shape": [2], "data": TEXTS}],
                   "outputs": [{"name": "logits_per_image"}]}
            r = httpx.post(agent.url + "/v2/models/clip/infer", json=req, timeout=60)
            assert r.status_code == 200, r.text
            out = r.json()["outputs"]
            assert [o["name"] for o in out] == ["logits_per_image"]
            np.testing.assert_allclose(np.asarray(out[0]["data"], np.float32).reshape(out[0]["shape"]),
                                       ref["logits_per_image"], atol=1e-4, rtol=1e-3)

            # a raw text with a tensor image passed through (mixed request)
            r = httpx.post(agent.url + "/v2/models/clip/infer", timeout=60, json={"inputs": [
                {"name": "text", "datatype": "BYTES", "shape": [1], "data": TEXTS[:1]},
                {"name": "pixel_values", "datatype": "FP32", "shape": [1, 3, 32, 32], "data": [0.0] * 3072}]})
            assert r.status_code == 200, r.text

            # an undecodable image is the client's error, named
            bad = {"inputs": [{"name": "image", "datatype": "BYTES", "shape": [1], "data": ["not an image"]},
                              {"name": "text", "datatype": "BYTES", "shape": [1], "data": ["x"]}]}
            r = httpx.post(agent.url + "/v2/models/clip/infer", json=bad, timeout=60)
            assert r.status_code == 400 and "image" in r.json()["error"]

            # per-stage series for the dashboards (two polls around one more request)
            from studio.telemetry import samples as S
            from studio.telemetry.collectors import AgentMetricsCollector

            col = AgentMetricsCollector(agent.url)
            col.collect()
            body, hlen = _binary_request(images, TEXTS)
            assert httpx.post(agent.url + "/v2/models/clip/infer", content=body, timeout=60,
                              headers={"Inference-Header-Content-Length": str(hlen)}).status_code == 200
            got_series = {s.series: s.value for s in col.collect()}
            for series in (S.STAGE_PRE_MS, S.STAGE_INFER_MS, S.STAGE_POST_MS, S.STAGE_QUEUE_MS):
                assert got_series.get(series) is not None and got_series[series] >= 0, series
            assert got_series[S.STAGE_PRE_MS] > 0 and got_series[S.STAGE_INFER_MS] > 0

            # per-stage latency in the Prometheus metrics
            prom = httpx.get(agent.url + "/metrics").text
            for stage in ("preprocess", "infer", "postprocess"):
                for phase in ("queue", "service"):
                    line = (f'studio_agent_stage_duration_seconds_count{{model="clip",phase="{phase}",'
                            f'stage="{stage}"}}')
                    assert line in prom, (stage, phase)
            assert 'studio_agent_stage_queue_depth{model="clip",stage="infer"}' in prom

            # Triton statistics from the stages: 4 answered, 1 failed; preprocessing is compute_input
            (ms,) = httpx.get(agent.url + "/v2/models/clip/stats").json()["model_stats"]
            inf = ms["inference_stats"]
            assert inf["success"]["count"] == 4 and inf["fail"]["count"] == 1 and ms["execution_count"] == 4
            parts = [inf[k]["ns"] for k in ("queue", "compute_input", "compute_infer", "compute_output")]
            assert all(p > 0 for p in parts[1:]) and parts[0] >= 0 and sum(parts) <= inf["success"]["ns"] + 32

            # traces: one server span per request, its stages as children, the client's trace continued
            def have(rx: OtlpReceiver) -> bool:
                return any(s.trace_id == "0af7651916cd43dd8448eb211c80319c" for s in rx.spans) and len(
                    [s for s in rx.spans if s.name == "infer clip"]) >= 3

            assert rx.wait_for(have), [s.name for s in rx.spans]
            root = next(s for s in rx.spans if s.trace_id == "0af7651916cd43dd8448eb211c80319c"
                        and s.name == "infer clip")
            assert root.parent_span_id == "b7ad6b7169203331" and root.service == "studio-agent"
            assert root.attributes["model"] == "clip"
            kids = {s.name: s for s in rx.spans if s.parent_span_id == root.span_id}
            assert set(kids) == {"preprocess", "infer", "postprocess"}
            assert root.start_ns <= kids["preprocess"].start_ns <= kids["infer"].start_ns <= root.end_ns
            assert rx.wait_for(lambda rx: "studio.agent.stage.duration" in rx.metric_names), rx.metric_names
        finally:
            agent.stop()

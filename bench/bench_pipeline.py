"""Staged pipeline vs sequential processing: raw JPEG requests (decode, resize, normalise) into a model whose
inference costs about as much as the preprocessing.

    .venv/bin/python bench/bench_pipeline.py [--requests 200] [--pre-workers 1] [--depth 8]

Both modes use the same stage functions (studio.agent.pipeline.StagedPipeline); "sequential" runs each
request's preprocess -> infer -> postprocess in one thread before the next request, "pipeline" submits
requests concurrently (closed loop, --clients in flight) through the bounded stage queues. ONNX Runtime runs
with one intra-op thread in both, so the gain is overlap, not more threads inside the model.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from studio.agent.kserve import InferRequest  # noqa: E402
from studio.agent.pipeline import StagedPipeline  # noqa: E402
from studio.agent.runtime import ServedModel, _specs  # noqa: E402
from studio.edge.preprocess import build_preprocessors  # noqa: E402


def make_model(path: Path, k: int) -> None:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((3 * 224 * 224, k)).astype(np.float32)
                                * 0.001, "W")
    shape = numpy_helper.from_array(np.array([-1, 3 * 224 * 224], np.int64), "shape")
    g = helper.make_graph(
        [helper.make_node("Reshape", ["pixel_values", "shape"], ["flat"]),
         helper.make_node("MatMul", ["flat", "W"], ["mm"]), helper.make_node("Softmax", ["mm"], ["probs"])],
        "bench", [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, ["batch", 3, 224, 224])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", k])], [w, shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    onnx.save(m, str(path))


def served(folder: Path, k: int) -> ServedModel:
    import onnxruntime as ort

    make_model(folder / "model.onnx", k)
    (folder / "preprocessor_config.json").write_text(json.dumps({
        "do_resize": True, "size": {"shortest_edge": 224}, "resample": 3, "do_center_crop": True,
        "crop_size": {"height": 224, "width": 224}, "do_rescale": True, "rescale_factor": 1 / 255,
        "do_normalize": True, "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    m = ServedModel(name="bench", version="1", path=folder / "model.onnx", session=sess,
                    inputs=_specs(sess.get_inputs()), outputs=_specs(sess.get_outputs()),
                    providers=sess.get_providers(), output_names=[o.name for o in sess.get_outputs()])
    m.raw_inputs = build_preprocessors([{"name": "image", "kind": "image", "produces": ["pixel_values"],
                                         "files": ["preprocessor_config.json"]}], folder)
    return m


def jpeg(seed: int) -> bytes:
    from PIL import Image

    rng = np.random.default_rng(seed)
    img = Image.fromarray((rng.random((480, 640, 3)) * 255).astype(np.uint8))
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def request(img: bytes) -> InferRequest:
    return InferRequest(inputs={"image": np.array([img], dtype=object)}, outputs=None, binary_output=True)


def stage_times(pl: StagedPipeline, img: bytes, n: int = 20) -> dict[str, float]:
    runs = [pl.run_sequential(request(img)).t for _ in range(n)]
    return {s: statistics.median(r[s][2] - r[s][1] for r in runs) * 1e3 for s in runs[0]}


async def pipelined(pl: StagedPipeline, imgs: list[bytes], n: int, clients: int) -> float:
    k = 0

    async def client() -> None:
        nonlocal k
        while k < n:
            k += 1
            await pl.submit(request(imgs[k % len(imgs)]))

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return n / (time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--pre-workers", type=int, default=1)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--k", type=int, default=0, help="model width (0: calibrate so infer ~ preprocess)")
    args = ap.parse_args()
    imgs = [jpeg(i) for i in range(8)]
    with tempfile.TemporaryDirectory() as tmp:
        k = args.k or 16
        while True:  # calibrate the model's cost to the preprocessing's
            pl = StagedPipeline(served(Path(tmp), k), pre_workers=args.pre_workers, depth=args.depth)
            st = stage_times(pl, imgs[0])
            if args.k or st["infer"] >= 0.8 * st["preprocess"] or k >= 4096:
                break
            k = int(k * max(1.25, min(4.0, st["preprocess"] / max(st["infer"], 1e-3))))
        n = args.requests
        t0 = time.perf_counter()
        for i in range(n):
            pl.run_sequential(request(imgs[i % len(imgs)]))
        seq = n / (time.perf_counter() - t0)
        par = asyncio.run(pipelined(pl, imgs, n, args.clients))
        pl.close()
    print(f"model width k={k}; median stage service ms: "
          + ", ".join(f"{s} {v:.2f}" for s, v in st.items()))
    print(f"sequential: {seq:.1f} req/s   pipeline ({args.pre_workers} preprocess workers, depth {args.depth}, "
          f"{args.clients} clients): {par:.1f} req/s   speed-up {par / seq:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

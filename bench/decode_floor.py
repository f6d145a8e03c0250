"""The memory-bandwidth floor of greedy decoding on this machine: how fast any runtime can read a decoder's weights.

Why: at batch 1 each new token multiplies a vector by every weight matrix once, so a decoder whose weights do not
fit the caches runs at (bytes of weights) / (memory bandwidth) per token at best, whatever the runtime. This bench
measures that bandwidth the way decoding uses it (matrix-vector products over weights far larger than the caches),
in ONNX Runtime and in torch, at the given thread count, and prints the best tokens/s a decoder of ``--decoder-gb``
can reach. Compare a runtime's measured tokens/s with it (BENCHMARKS.md, issue 29).

    python -m bench.decode_floor --gb 2 --threads 2 --decoder-gb 7.1
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def _chain(total_bytes: int, hidden: int) -> tuple[list[np.ndarray], int]:
    per = hidden * hidden * 4
    n = max(1, total_bytes // per)
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32) for _ in range(n)], n * per


def ort_bandwidth(weights: list[np.ndarray], threads: int, reps: int) -> float:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    h = weights[0].shape[0]
    nodes, inits = [], []
    for i, w in enumerate(weights):
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("MatMul", ["x" if i == 0 else f"h{i - 1}", f"w{i}"],
                                      ["y" if i == len(weights) - 1 else f"h{i}"]))
    graph = helper.make_graph(nodes, "gemv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, h])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, h])], inits)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "gemv.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path),
                  save_as_external_data=True, location="gemv.onnx.data")
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        x = np.ones((1, h), np.float32)
        sess.run(None, {"x": x})
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            sess.run(None, {"x": x})
            times.append(time.perf_counter() - t0)
    return sum(w.nbytes for w in weights) / statistics.median(times)


def torch_bandwidth(weights: list[np.ndarray], threads: int, reps: int) -> float:
    import torch

    torch.set_num_threads(threads)
    ws = [torch.from_numpy(w.T.copy()) for w in weights]  # [out, in], as nn.Linear stores them
    x = torch.ones((1, ws[0].shape[1]))

    def run() -> None:
        h = x
        with torch.inference_mode():
            for w in ws:
                h = torch.nn.functional.linear(h, w)  # what HF's decoder layers call

    run()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return sum(w.nbytes for w in weights) / statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gb", type=float, default=2.0, help="weights streamed per pass (far above the caches)")
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--decoder-gb", type=float, default=7.1, help="the decoder whose best tokens/s to print")
    a = p.parse_args()
    weights, total = _chain(int(a.gb * 1e9), a.hidden)
    ort_bw = ort_bandwidth(weights, a.threads, a.reps)
    torch_bw = torch_bandwidth(weights, a.threads, a.reps)
    print(f"matrix-vector products over {total / 1e9:.2f} GB of float32 weights, {a.threads} threads, median of "
          f"{a.reps}")
    for name, bw in (("onnxruntime", ort_bw), ("torch", torch_bw)):
        print(f"  {name:12} {bw / 1e9:6.1f} GB/s   a {a.decoder_gb:.1f} GB decoder: at best "
              f"{bw / (a.decoder_gb * 1e9):.2f} tokens/s ({a.decoder_gb * 1e9 / bw * 1000:.0f} ms per token)")


if __name__ == "__main__":
    main()

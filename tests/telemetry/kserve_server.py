"""A small real KServe v2 HTTP server (stdlib http.server + ONNX Runtime) for the telemetry tests.

It keeps Triton-compatible statistics (/v2/models/NAME/stats) and Prometheus metrics (/metrics, nv_* names)
of its own, so the load generator's counts can be checked against the server's counters. Run as a script:
``python kserve_server.py --port 0`` prints ``PORT <n>`` once it listens.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

MODEL = "mlp"
DTYPES = {"FP32": np.float32, "INT64": np.int64, "INT32": np.int32}


def build_mlp(path: Path, n_in: int = 16, n_hidden: int = 64, n_out: int = 8) -> Path:
    """A tiny MLP (batch dim dynamic) written with onnx.helper."""
    rng = np.random.default_rng(0)
    w1 = helper.make_tensor("w1", TensorProto.FLOAT, [n_in, n_hidden], rng.standard_normal(n_in * n_hidden).tolist())
    w2 = helper.make_tensor("w2", TensorProto.FLOAT, [n_hidden, n_out], rng.standard_normal(n_hidden * n_out).tolist())
    nodes = [helper.make_node("MatMul", ["INPUT0", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["OUTPUT0"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("INPUT0", TensorProto.FLOAT, ["batch", n_in])],
                              [helper.make_tensor_value_info("OUTPUT0", TensorProto.FLOAT, ["batch", n_out])], [w1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.success = self.fail = 0
        self.success_ns = self.queue_ns = self.in_ns = self.infer_ns = self.out_ns = 0
        self.fail_ns = 0
        self.pending = 0

    def triton_json(self, name: str) -> dict:
        with self.lock:
            return {"model_stats": [{
                "name": name, "version": "1", "last_inference": int(time.time() * 1000),
                "inference_count": self.success, "execution_count": self.success,
                "inference_stats": {
                    "success": {"count": self.success, "ns": self.success_ns},
                    "fail": {"count": self.fail, "ns": self.fail_ns},
                    "queue": {"count": self.success, "ns": self.queue_ns},
                    "compute_input": {"count": self.success, "ns": self.in_ns},
                    "compute_infer": {"count": self.success, "ns": self.infer_ns},
                    "compute_output": {"count": self.success, "ns": self.out_ns}},
                "batch_stats": []}]}

    def prometheus(self, name: str) -> str:
        lab = f'{{model="{name}",version="1"}}'
        with self.lock:
            lines = [
                "# HELP nv_inference_request_success Number of successful inference requests",
                "# TYPE nv_inference_request_success counter",
                f"nv_inference_request_success{lab} {self.success}",
                f'nv_inference_request_failure{{model="{name}",reason="BACKEND",version="1"}} {self.fail}',
                f"nv_inference_count{lab} {self.success}",
                f"nv_inference_exec_count{lab} {self.success}",
                f"nv_inference_request_duration_us{lab} {self.success_ns // 1000}",
                f"nv_inference_queue_duration_us{lab} {self.queue_ns // 1000}",
                f"nv_inference_compute_infer_duration_us{lab} {self.infer_ns // 1000}",
                f"nv_inference_pending_request_count{lab} {self.pending}",
            ]
        try:
            import psutil

            vm = psutil.virtual_memory()
            lines += [f"nv_cpu_utilization {psutil.cpu_percent(None) / 100.0}",
                      f"nv_cpu_memory_total_bytes {vm.total}", f"nv_cpu_memory_used_bytes {vm.total - vm.available}"]
        except ImportError:
            pass
        return "\n".join(lines) + "\n"


def make_handler(session: ort.InferenceSession, name: str, stats: Stats) -> type[BaseHTTPRequestHandler]:
    inputs = [{"name": i.name, "datatype": "FP32", "shape": [-1 if not isinstance(d, int) else d for d in i.shape]}
              for i in session.get_inputs()]
    outputs = [{"name": o.name, "datatype": "FP32", "shape": [-1 if not isinstance(d, int) else d for d in o.shape]}
               for o in session.get_outputs()]
    meta = json.dumps({"name": name, "versions": ["1"], "platform": "onnxruntime_onnx",
                       "inputs": inputs, "outputs": outputs}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *a: object) -> None:
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            p = self.path
            if p in ("/v2/health/ready", "/v2/health/live", f"/v2/models/{name}/ready"):
                self._send(200, b"")
            elif p == "/v2":
                self._send(200, json.dumps({"name": "studio-test-kserve", "version": "1"}).encode())
            elif p == f"/v2/models/{name}":
                self._send(200, meta)
            elif p == f"/v2/models/{name}/stats":
                self._send(200, json.dumps(stats.triton_json(name)).encode())
            elif p == "/metrics":
                self._send(200, stats.prometheus(name).encode(), "text/plain; version=0.0.4")
            else:
                self._send(404, json.dumps({"error": f"not found: {p}"}).encode())

        def do_POST(self) -> None:  # noqa: N802
            t0 = time.perf_counter_ns()
            n = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(n)
            if self.path != f"/v2/models/{name}/infer":
                self._send(404, json.dumps({"error": f"unknown model path {self.path}"}).encode())
                return
            with stats.lock:
                stats.pending += 1
            try:
                req = json.loads(body)
                feed = {i["name"]: np.asarray(i["data"], dtype=DTYPES[i["datatype"]]).reshape(i["shape"])
                        for i in req["inputs"]}
                t1 = time.perf_counter_ns()
                outs = session.run(None, feed)
                t2 = time.perf_counter_ns()
                resp = json.dumps({"model_name": name, "model_version": "1", "outputs": [
                    {"name": o["name"], "datatype": "FP32", "shape": list(a.shape), "data": a.reshape(-1).tolist()}
                    for o, a in zip(outputs, outs, strict=True)]}).encode()
                t3 = time.perf_counter_ns()
            except Exception as exc:  # noqa: BLE001 - answered as HTTP 400 and counted as a failure
                with stats.lock:
                    stats.pending -= 1
                    stats.fail += 1
                    stats.fail_ns += time.perf_counter_ns() - t0
                self._send(400, json.dumps({"error": str(exc)}).encode())
                return
            with stats.lock:
                stats.pending -= 1
                stats.success += 1
                stats.success_ns += t3 - t0
                stats.in_ns += t1 - t0
                stats.infer_ns += t2 - t1
                stats.out_ns += t3 - t2
            self._send(200, resp)

    return Handler


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--model-file", type=Path)
    ap.add_argument("--name", default=MODEL)
    args = ap.parse_args(argv)
    path = args.model_file
    if path is None:
        import tempfile

        path = build_mlp(Path(tempfile.mkdtemp()) / "mlp.onnx")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(session, args.name, Stats()))
    srv.daemon_threads = True
    print(f"PORT {srv.server_address[1]}", flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Faults under load on a real agent process: 64 client threads keep inferring while v2 is deployed, v1 is
rolled back to, a bundle whose model cannot answer is deployed, and the agent is killed with SIGKILL and
restarted. Every answer is v1's or v2's exact output (nothing corrupted), the only errors are refused
connections while the process is down, no version is lost, and the active version keeps serving throughout."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from onnx import TensorProto, helper

from studio.core.errors import StudioError
from studio.package.bundle import build_bundle
from studio.package.client import AgentClient, deploy_bundle
from tests.edge.helpers import AgentProcess, mlp_ref

pytestmark = pytest.mark.timeout(300)
CLIENTS = 64
X = np.full((1, 16), 0.5, np.float32)
BODY = b'{"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": [' + b",".join([b"0.5"] * 16) + b"]}]}"


def _broken_model(path: Path) -> Path:
    """Loads in ONNX Runtime, cannot answer: its Reshape asks 16 values for a 3x7 shape (warm-up fails)."""
    import onnx
    from onnx import numpy_helper

    shape = numpy_helper.from_array(np.array([3, 7], np.int64), "shape")
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["out"])], "broken",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3, 7])], [shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, path)
    return path


class Load:
    """CLIENTS threads, each on its own keep-alive connection, recording every outcome."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.stop = threading.Event()
        self.ok = {"1": 0, "2": 0}
        self.refused = 0  # connection errors (only expected while the process is down)
        self.bad: list[str] = []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(CLIENTS)]
        self.v1, self.v2 = mlp_ref(X, 1.0).ravel(), mlp_ref(X, 3.0).ravel()

    def _run(self) -> None:
        client = httpx.Client(timeout=30)
        while not self.stop.is_set():
            try:
                r = client.post(self.url + "/v2/models/tiny/infer", content=BODY)
            except httpx.TransportError:
                with self.lock:
                    self.refused += 1
                client.close()
                client = httpx.Client(timeout=30)
                time.sleep(0.05)
                continue
            with self.lock:
                if r.status_code != 200:
                    self.bad.append(f"{r.status_code}: {r.text[:200]}")
                    continue
                out = np.asarray(r.json()["outputs"][0]["data"], np.float32)
                if np.allclose(out, self.v1, atol=1e-5):
                    self.ok["1"] += 1
                elif np.allclose(out, self.v2, atol=1e-4):
                    self.ok["2"] += 1
                else:
                    self.bad.append(f"corrupted answer {out[:4]}")
        client.close()

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(30)

    def snapshot(self) -> tuple[int, int, int]:
        with self.lock:
            return self.ok["1"], self.ok["2"], self.refused


def _wait_more(load: Load, key: str, n: int = 50, timeout: float = 60) -> None:
    start = load.ok[key]
    deadline = time.time() + timeout
    while load.ok[key] < start + n and time.time() < deadline:
        time.sleep(0.05)
    assert load.ok[key] >= start + n, f"version {key} not answering ({load.ok}, refused {load.refused})"


def test_deploy_rollback_failing_bundle_and_kill9_under_64_clients(agent: AgentProcess, bundles, signing_key,  # type: ignore[no-untyped-def]
                                                                   token_file: Path, tmp_path: Path) -> None:
    token = token_file.read_text().strip()
    deploy_bundle(bundles["1"], agent.url, token)
    broken = build_bundle(_broken_model(tmp_path / "broken" / "tiny.onnx"), "generic-x86_64", signing_key,
                          tmp_path / "tiny-3.tar", version="3").bundle
    with Load(agent.url) as load:
        _wait_more(load, "1")
        assert deploy_bundle(bundles["2"], agent.url, token).version == "2"  # deploy under load
        _wait_more(load, "2")
        AgentClient(agent.url, token).rollback("tiny", "1")  # rollback under load
        _wait_more(load, "1")
        with pytest.raises(StudioError, match="warm-up"):  # a bundle that cannot answer: refused, v1 serves
            deploy_bundle(Path(broken), agent.url, token)
        _wait_more(load, "1")
        before_kill = load.snapshot()
        assert before_kill[2] == 0, "connections refused while the agent was up"
        agent.kill9()  # the process dies mid-traffic, then comes back on the same port and data folder
        time.sleep(0.5)
        agent.start()
        _wait_more(load, "1")
    assert load.bad == [], load.bad[:5]
    assert load.ok["1"] > 200 and load.ok["2"] > 0 and load.refused > 0
    st = AgentClient(agent.url, token).status()["models"]["tiny"]
    assert st["active"] == "1" and [v["version"] for v in st["versions"]] == ["1", "2"]  # 3 never installed
    print(f"\nfaults under {CLIENTS} clients: v1 answers {load.ok['1']}, v2 {load.ok['2']}, refused while down "
          f"{load.refused}, other errors {len(load.bad)}")

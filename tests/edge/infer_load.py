"""64 client threads inferring against a real agent on keep-alive connections, every answer checked against
the exact output of v1 (scale 1) or v2 (scale 3) of the tiny MLP: the load the fault tests run under."""

from __future__ import annotations

import threading
import time

import httpx
import numpy as np

from tests.edge.helpers import mlp_ref

CLIENTS = 64
X = np.full((1, 16), 0.5, np.float32)
BODY = b'{"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": [' + b",".join([b"0.5"] * 16) + b"]}]}"


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


def wait_more(load: Load, key: str, n: int = 50, timeout: float = 60) -> None:
    start = load.ok[key]
    deadline = time.time() + timeout
    while load.ok[key] < start + n and time.time() < deadline:
        time.sleep(0.05)
    assert load.ok[key] >= start + n, f"version {key} not answering ({load.ok}, refused {load.refused})"

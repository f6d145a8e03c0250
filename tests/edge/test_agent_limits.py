"""Each request limit of the agent against a real studio-agent process on loopback: a gzip bomb, an oversize
body (declared and chunked), an unknown Content-Encoding, slow headers and a slow body, a flood of unknown
model names, the per-model in-flight cap (HTTP and gRPC share it), and gRPC's message size. After each, a valid
request still succeeds and the agent still runs."""

from __future__ import annotations

import json
import socket
import time
import uuid
import zlib
from pathlib import Path

import httpx
import numpy as np
import pytest
import tritonclient.http as th

from studio.package.client import deploy_bundle
from tests.edge.helpers import AgentProcess, free_port, mlp_ref

pytestmark = pytest.mark.timeout(300)
LIMITS = ["--max-request-mb", "1", "--read-timeout", "1.5", "--header-timeout", "1.5", "--max-inflight", "2"]


@pytest.fixture()
def limited(tmp_path: Path, trust_file: Path, token_file: Path, bundles):  # type: ignore[no-untyped-def]
    gport = free_port()
    a = AgentProcess(tmp_path / "agent-data", trust_file, token_file,
                     extra=[*LIMITS, "--grpc-port", str(gport)]).start()
    a.grpc_port = gport  # type: ignore[attr-defined]
    deploy_bundle(bundles["1"], a.url, token_file.read_text().strip())
    yield a
    a.stop()


def _body(rows: int = 1) -> bytes:
    return json.dumps({"inputs": [{"name": "x", "shape": [rows, 16], "datatype": "FP32",
                                   "data": [0.5] * (16 * rows)}]}).encode()


def _still_serves(a: AgentProcess) -> None:
    r = httpx.post(a.url + "/v2/models/tiny/infer", content=_body(), timeout=10)
    assert r.status_code == 200, r.text
    np.testing.assert_allclose(r.json()["outputs"][0]["data"], mlp_ref(np.full((1, 16), 0.5, np.float32)).ravel(),
                               rtol=1e-6)
    assert a.proc is not None and a.proc.poll() is None


def _bomb(inflated: int) -> bytes:
    """gzip of ``inflated`` zero bytes, made in steps (never the whole input in memory)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(1 << 20)
    out = [c.compress(zeros) for _ in range(inflated >> 20)]
    return b"".join(out) + c.flush()


def test_body_encoding_and_bomb_limits(limited: AgentProcess) -> None:
    a = limited
    bomb = _bomb(512 << 20)  # ~0.5 MB on the wire, 512 MiB inflated (ratio ~1000:1)
    assert len(bomb) < (1 << 20)
    r = httpx.post(a.url + "/v2/models/tiny/infer", content=bomb, headers={"content-encoding": "gzip"}, timeout=30)
    assert r.status_code == 413 and r.json()["limit"] == "inflate_too_large" and "ratio 200:1" in r.json()["error"]
    _still_serves(a)

    big = _body(15000)  # ~1.2 MB of JSON, over --max-request-mb 1
    r = httpx.post(a.url + "/v2/models/tiny/infer", content=big, timeout=30)
    assert r.status_code == 413 and r.json()["limit"] == "body_too_large" and "--max-request-mb" in r.json()["error"]
    assert r.headers["connection"] == "close"

    def chunks():  # no Content-Length: the cap is found while reading
        for i in range(0, len(big), 64 << 10):
            yield big[i:i + (64 << 10)]

    r = httpx.post(a.url + "/v2/models/tiny/infer", content=chunks(), timeout=30)
    assert r.status_code == 413 and r.json()["limit"] == "body_too_large"

    r = httpx.post(a.url + "/v2/models/tiny/infer", content=_body(), headers={"content-encoding": "br"}, timeout=10)
    assert r.status_code == 415 and "br" in r.json()["error"] and r.headers["accept-encoding"] == "gzip, deflate"
    assert r.headers.get("connection") != "close"  # the body was read whole: nothing to drain, keep-alive stays
    # a small compressed request is fine
    r = httpx.post(a.url + "/v2/models/tiny/infer", content=zlib.compress(_body()),
                   headers={"content-encoding": "deflate"}, timeout=10)
    assert r.status_code == 200
    _still_serves(a)


def _raw(a: AgentProcess) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    return s


def _recv_all(s: socket.socket) -> bytes:
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        out += chunk
    return out


def test_slow_clients_are_cut_off(limited: AgentProcess) -> None:
    a = limited
    s = _raw(a)  # headers one piece at a time, never finished
    s.sendall(b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\n")
    time.sleep(0.5)
    s.sendall(b"X-Slow: 1\r\n")
    reply = _recv_all(s)  # the agent answers and closes: recv returns, no client timeout
    assert reply.startswith(b"HTTP/1.1 408") and b"header_timeout" in reply
    s.close()

    body = _body()
    s = _raw(a)  # headers complete, the body stops half-way
    s.sendall(b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:20])
    reply = _recv_all(s)
    assert b" 408 " in reply.split(b"\r\n", 1)[0] and b"read_timeout" in reply
    s.close()
    _still_serves(a)


def test_unknown_model_names_do_not_grow_the_metrics(limited: AgentProcess) -> None:
    a = limited
    before = httpx.get(a.url + "/metrics").text
    names = [uuid.uuid4().hex for _ in range(300)]
    with httpx.Client(timeout=10) as c:
        for name in names:
            r = c.post(f"{a.url}/v2/models/{name}/infer", content=_body())
            assert r.status_code == 404
        r = c.post(a.url + "/v2/models/..%2F..%2Fetc/infer", content=_body())
        assert r.status_code in (404, 405)
    after = httpx.get(a.url + "/metrics").text
    assert len(after.splitlines()) - len(before.splitlines()) <= 6  # the one "unknown" child (total + created)
    assert 'model="unknown",reason="unknown_model"' in after.replace(" ", "")
    assert not any(n in after for n in names)
    _still_serves(a)


def test_inflight_cap_answers_503_with_retry_after_on_http_and_grpc(limited: AgentProcess) -> None:
    import tritonclient.grpc as tg
    from tritonclient.utils import InferenceServerException

    a = limited
    body = _body()
    holders = []
    for _ in range(2):  # two requests in flight: headers sent, the body held back
        s = _raw(a)
        s.sendall(b"POST /v2/models/tiny/infer HTTP/1.1\r\nHost: x\r\nContent-Length: "
                  + str(len(body)).encode() + b"\r\n\r\n" + body[:10])
        holders.append(s)
    time.sleep(0.3)
    r = httpx.post(a.url + "/v2/models/tiny/infer", content=body, timeout=10)
    assert r.status_code == 503 and r.headers["retry-after"] == "1" and r.json()["limit"] == "overloaded"
    g = tg.InferenceServerClient(f"127.0.0.1:{a.grpc_port}")  # type: ignore[attr-defined]
    i = tg.InferInput("x", [1, 16], "FP32")
    i.set_data_from_numpy(np.full((1, 16), 0.5, np.float32))
    with pytest.raises(InferenceServerException, match="in flight"):
        g.infer("tiny", [i])
    for s in holders:  # the held requests finish normally
        s.sendall(body[10:])
        assert b"HTTP/1.1 200" in s.recv(65536)
        s.close()
    _still_serves(a)
    r = g.infer("tiny", [i])
    np.testing.assert_allclose(r.as_numpy("out"), mlp_ref(np.full((1, 16), 0.5, np.float32)), rtol=1e-6)
    # over --max-request-mb on gRPC: grpc's own message cap
    big = tg.InferInput("x", [20000, 16], "FP32")
    big.set_data_from_numpy(np.zeros((20000, 16), np.float32))  # 1.28 MB
    with pytest.raises(InferenceServerException, match="(?i)resource|larger than max"):
        g.infer("tiny", [big])
    c = th.InferenceServerClient(f"127.0.0.1:{a.port}")
    assert c.is_server_live()

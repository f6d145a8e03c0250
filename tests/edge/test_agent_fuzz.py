"""Hostile and malformed inference requests against a real studio-agent process, generated with hypothesis over
the KServe v2 JSON and binary formats: random and wrong fields, dtypes and shapes, huge shapes with tiny bodies,
truncated binary tensors, lying Inference-Header-Content-Length values, random headers and encodings, path tricks
in model names. The agent must answer every one with a 4xx JSON error (never a 5xx other than a deliberate 503),
stay up, keep its memory flat, and keep answering the valid requests interleaved with them.

``STUDIO_FUZZ_EXAMPLES`` sets how many (default 1,000 in `make test`, about 15 s; the issue's 10,000 is
``STUDIO_FUZZ_EXAMPLES=10000 pytest tests/edge/test_agent_fuzz.py``). It found the 415 path waiting out the
read timeout to drain a body it had already read (now answered at once, connection kept).
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

import httpx
import numpy as np
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.edge.helpers import AgentProcess, mlp_ref

EXAMPLES = int(os.environ.get("STUDIO_FUZZ_EXAMPLES", "1000"))
pytestmark = pytest.mark.timeout(max(300, EXAMPLES // 10))

DTYPES = ["FP32", "FP16", "FP64", "INT64", "INT32", "INT8", "UINT8", "BOOL", "BYTES", "BF16", "fp32", "", "FP3\u00e9"]
NAMES = st.one_of(st.just("tiny"), st.just("tiny/versions/1"), st.just("tiny/versions/9"),
                  st.sampled_from(["..", "%2e%2e", "..%2F..%2Fetc%2Fpasswd", "tiny%00", "a" * 300, "\u00e9\u4e2d",
                                   "tiny/versions/", "tiny/../tiny", "%", "stats"]),
                  st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40))
SHAPES = st.one_of(st.just([1, 16]), st.just([2, 16]),
                   st.lists(st.integers(-3, 2**40), max_size=6),
                   st.lists(st.sampled_from([0, 1, 16, 2**31, 2**62]), min_size=1, max_size=4))
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers(-2**70, 2**70)
                           | st.text(max_size=20),
                           lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                           max_leaves=30)


@st.composite
def tensors(draw: Any) -> dict[str, Any]:
    t: dict[str, Any] = {"name": draw(st.sampled_from(["x", "x", "y", "", "out"])),
                         "shape": draw(SHAPES), "datatype": draw(st.sampled_from(DTYPES))}
    if draw(st.booleans()):
        t["data"] = draw(st.one_of(st.lists(st.floats(-1e6, 1e6), max_size=64), JSON_VALUES))
    if draw(st.integers(0, 4)) == 0:
        t["parameters"] = draw(st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=3))
    if draw(st.integers(0, 5)) == 0:  # drop a required field
        t.pop(draw(st.sampled_from(["name", "shape", "datatype"])), None)
    return t


@st.composite
def requests(draw: Any) -> tuple[str, str, dict[str, str], bytes]:
    """(method, path, headers, body) of one hostile request."""
    name = draw(NAMES)
    headers: dict[str, str] = {}
    kind = draw(st.sampled_from(["json", "json", "binary", "garbage", "empty"]))
    doc: dict[str, Any] = {"inputs": draw(st.lists(tensors(), max_size=3))}
    if draw(st.booleans()):
        doc["outputs"] = draw(st.lists(st.fixed_dictionaries({"name": st.sampled_from(["out", "nope", ""])}),
                                       max_size=2))
    if draw(st.integers(0, 6)) == 0:
        doc = draw(JSON_VALUES)  # not even an object
    if kind == "json":
        body = json.dumps(doc, allow_nan=True).encode()
    elif kind == "binary":  # a JSON header announcing binary tensors, followed by fewer (or other) bytes
        for t in doc.get("inputs", []) if isinstance(doc, dict) else []:
            t.pop("data", None)
            t["parameters"] = {"binary_data_size": draw(st.integers(-8, 1 << 34))}
        header = json.dumps(doc).encode()
        tail = draw(st.binary(max_size=256))
        body = header + tail
        hl = draw(st.one_of(st.just(len(header)), st.integers(-5, len(body) + 100), st.just(2**63)))
        headers["inference-header-content-length"] = str(hl) if draw(st.integers(0, 9)) else "x" + str(hl)
    elif kind == "garbage":
        body = draw(st.binary(max_size=512))
    else:
        body = b""
    enc = draw(st.sampled_from([None, None, "gzip", "deflate", "br", "identity", "gzip, gzip"]))
    if enc:
        headers["content-encoding"] = enc  # the body is NOT compressed: the agent must reject it cleanly
    if draw(st.booleans()):
        headers["content-type"] = draw(st.sampled_from(["application/json", "application/octet-stream",
                                                        "text/plain", "\u00e9"]).filter(str.isascii))
    if draw(st.integers(0, 8)) == 0:
        headers["x-" + draw(st.text("abcdef", min_size=1, max_size=8))] = draw(st.text("ABC 123", max_size=200))
    method = "POST" if draw(st.integers(0, 9)) else draw(st.sampled_from(["GET", "PUT", "DELETE"]))
    return method, f"/v2/models/{quote(name, safe='/%')}/infer", headers, body  # raw controls: the client refuses


def _valid(client: httpx.Client) -> None:
    x = np.full((1, 16), 0.25, np.float32)
    header = json.dumps({"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32",
                                     "parameters": {"binary_data_size": 64}}],
                         "outputs": [{"name": "out", "parameters": {"binary_data": True}}]}).encode()
    r = client.post("/v2/models/tiny/infer", content=header + x.tobytes(),
                    headers={"inference-header-content-length": str(len(header))})
    assert r.status_code == 200, r.text
    hl = int(r.headers["inference-header-content-length"])
    out = np.frombuffer(r.content[hl:], dtype=np.float32).reshape(1, 8)
    np.testing.assert_allclose(out, mlp_ref(x), rtol=1e-6)


@pytest.fixture(scope="module")
def fuzz_agent(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    from tests.edge.helpers import deploy_tiny, dev_keys

    root = tmp_path_factory.mktemp("fuzz")
    dev = dev_keys(root, "token")
    a = AgentProcess(root / "data", dev.trust, dev.token, extra=["--max-request-mb", "4", "--read-timeout", "5"]).start()
    deploy_tiny(a, dev, root)
    yield a
    a.stop()


def test_hostile_requests_get_clean_4xx_and_the_agent_stays_up(fuzz_agent: AgentProcess) -> None:
    a = fuzz_agent
    proc = psutil.Process(a.proc.pid)  # type: ignore[union-attr]
    seen: dict[int, int] = {}
    five_xx: list[tuple[str, str, int, str]] = []
    with httpx.Client(base_url=a.url, timeout=30) as client:
        for _ in range(50):  # warm up: allocator, caches
            _valid(client)
        rss0 = proc.memory_info().rss
        count = {"n": 0}

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(requests())
        def one(req: tuple[str, str, dict[str, str], bytes]) -> None:
            method, path, headers, body = req
            try:
                r = client.request(method, path, content=body, headers=headers)
            except httpx.HTTPError as exc:  # the agent closed a connection on purpose (limits): not a crash
                assert proc.is_running(), f"agent died on {method} {path!r}: {exc}"
                return
            seen[r.status_code] = seen.get(r.status_code, 0) + 1
            if r.status_code >= 500 and r.status_code != 503:
                five_xx.append((method, path, r.status_code, r.text[:300]))
            if r.status_code >= 400 and r.headers.get("content-type", "").startswith("application/json"):
                assert "error" in r.json() or "detail" in r.json(), r.text
            count["n"] += 1
            if count["n"] % 25 == 0:
                _valid(client)  # valid requests interleaved keep succeeding

        one()
        _valid(client)
        rss1 = proc.memory_info().rss
    print(f"\nfuzz: {sum(seen.values())} hostile requests, statuses {dict(sorted(seen.items()))}, agent RSS "
          f"{rss0 / 2**20:.1f} -> {rss1 / 2**20:.1f} MiB")
    assert proc.is_running()
    assert not five_xx, f"{len(five_xx)} 5xx answers, e.g. {five_xx[:3]}"
    assert sum(seen.values()) >= EXAMPLES * 0.9 and seen.get(200, 0) < sum(seen.values())
    assert rss1 - rss0 < 10 << 20, f"agent RSS grew {(rss1 - rss0) / 2**20:.1f} MiB over {EXAMPLES} requests"
    metrics = httpx.get(a.url + "/metrics").text
    assert len(metrics) < 20_000, "metrics grew with the fuzzed names"


@st.composite
def management(draw: Any) -> tuple[str, str, dict[str, str], bytes, str]:
    """(method, path, headers, body, token kind) of one request to the management API."""
    route = draw(st.sampled_from(["/agent/status", "/agent/bundles", "/agent/trust", "/agent/models/{}/rollback"]))
    path = route.format(quote(draw(NAMES), safe="%")) if "{}" in route else route
    method = draw(st.sampled_from(["GET", "POST", "POST", "PUT", "DELETE"]))
    body = draw(st.one_of(st.binary(max_size=2048), JSON_VALUES.map(lambda v: json.dumps(v).encode()),
                          st.just(b'{"version": "1"}'), st.just(b'{"key": "ed25519 AAAA x"}'),
                          st.just(b"\x1f\x8b" + bytes(64))))  # a gzip/tar-looking start
    who = draw(st.sampled_from(["none", "wrong", "right", "right"]))
    headers = {}
    if draw(st.integers(0, 5)) == 0:
        headers["content-type"] = draw(st.sampled_from(["application/json", "application/x-tar", "text/plain"]))
    return method, path, headers, body, who


def test_management_api_refuses_or_rejects_cleanly_with_and_without_the_token(fuzz_agent: AgentProcess) -> None:
    a = fuzz_agent
    token = (a.token_file.read_text()).strip()
    proc = psutil.Process(a.proc.pid)  # type: ignore[union-attr]
    seen: dict[tuple[str, int], int] = {}
    bad: list[tuple[str, str, str, int, str]] = []
    with httpx.Client(base_url=a.url, timeout=30) as client:

        @settings(max_examples=max(100, EXAMPLES // 5), deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(management())
        def one(req: tuple[str, str, dict[str, str], bytes, str]) -> None:
            method, path, headers, body, who = req
            if who != "none":
                headers = {**headers, "authorization": "Bearer " + (token if who == "right" else token[::-1] + "x")}
            try:
                r = client.request(method, path, content=body, headers=headers)
            except httpx.HTTPError as exc:  # e.g. a lying content-length: the client or the agent gives up
                assert proc.is_running(), f"agent died on {method} {path!r}: {exc}"
                return
            seen[(who, r.status_code)] = seen.get((who, r.status_code), 0) + 1
            if r.status_code >= 500:
                bad.append((who, method, path, r.status_code, r.text[:300]))
            if who != "right" and r.status_code < 400:  # nothing of the management API answers without it
                bad.append((who, method, path, r.status_code, "accepted without the token"))

        one()
        _valid(client)
    print(f"\nmanagement fuzz: {sum(seen.values())} requests, (token, status): {dict(sorted(seen.items()))}")
    assert proc.is_running() and not bad, bad[:5]
    assert all(status in (401, 404, 405, 422) for (who, status) in seen if who != "right"), seen
    st_ = httpx.get(a.url + "/agent/status", headers={"authorization": "Bearer " + token}).json()
    assert st_["models"]["tiny"]["active"] == "1"  # nothing deployed, rolled back or lost

"""The agent's endpoint table (studio.agent.endpoints) is what it serves: every row answers on a real agent process
with the auth the row says, the HTTP app has no route outside the table, and every gRPC RPC has its row."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from studio.agent.endpoints import ENDPOINTS, FAST, ROUTED, extensions, match

pytestmark = pytest.mark.timeout(180)
BODY = b'{"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": [' + b",".join([b"0.5"] * 16) + b"]}]}"


def _concrete(path: str) -> str:
    return path.replace("{name}", "tiny").replace("{version}", "1")


def test_http_routes_are_the_table_rows(tmp_path: Path) -> None:
    """The FastAPI app's routes are exactly the table's routed rows (method and path), in the table's order."""
    from studio.agent.core import AgentConfig, AgentCore
    from studio.agent.server import create_app
    from studio.edge.trust import TrustedKeys

    fast = create_app(AgentCore(AgentConfig(data=tmp_path / "data", trusted=TrustedKeys(), token="t")))
    served = [(m, r.path) for r in fast.app.routes if hasattr(r, "methods") for m in sorted(r.methods)]
    assert served == [(ep.method, p) for ep in ROUTED for p in ep.paths]
    fast.executor.shutdown()


def test_every_row_answers_with_its_auth(infer_token_agent) -> None:  # type: ignore[no-untyped-def]
    """A real agent with an inference token: ``auth="none"`` rows answer without any token, ``"infer"`` rows 401
    without the inference token and not 401 with it, ``"agent"`` rows 401 without the agent token; the fast
    rows refuse a wrong method with 405 and their Allow header; GET /v2 lists the table's extensions."""
    import tritonclient.grpc as tg
    from tritonclient.utils import InferenceServerException

    a, infer = infer_token_agent
    gport = a.grpc_port
    for ep in ENDPOINTS:
        for path in ep.paths:
            url = a.url + _concrete(path)
            body = BODY if ep.name == "model_infer" else (b'{"text_input": "hi"}' if ep.fast else None)
            r = httpx.request(ep.method, url, content=body if ep.method == "POST" else None, timeout=30)
            if ep.auth == "none":
                assert r.status_code == 200, (ep.name, path, r.status_code)
                continue
            assert r.status_code == 401, (ep.name, path, r.status_code)
            if ep.auth == "infer":
                r = httpx.request(ep.method, url, content=body if ep.method == "POST" else None, headers=infer,
                                  timeout=30)
                assert r.status_code != 401, (ep.name, path, r.status_code, r.text)
                if ep.fast:
                    wrong = httpx.get(url, headers=infer, timeout=30)
                    assert wrong.status_code == 405 and wrong.headers["allow"] == ep.method, (ep.name, path)
    meta = httpx.get(a.url + "/v2", headers=infer).json()
    assert meta["extensions"] == extensions() and "generate" in meta["extensions"]
    g = tg.InferenceServerClient(f"127.0.0.1:{gport}")
    assert g.is_server_live() and g.is_server_ready()  # the table's open gRPC rows
    with pytest.raises(InferenceServerException, match="inference token"):
        g.get_server_metadata()
    assert g.get_server_metadata(headers=infer).name == "studio-agent"


def test_match_routes_by_the_table() -> None:
    """Paths resolve to the table's rows with their parameters; ``stats`` is never read as a model name."""
    assert match("/v2/models/stats")[0].name == "model_statistics"  # type: ignore[index]
    ep, params = match("/v2/models/m/versions/3/generate_stream")  # type: ignore[misc]
    assert (ep.name, params) == ("generate_stream", {"name": "m", "version": "3"})
    assert match("/v2/models/m/infer", FAST)[0].name == "model_infer"  # type: ignore[index]
    assert match("/v2/models/m/versions//infer") is None and match("/v2/models/a/b/infer") is None
    assert match("/v2/models/m/config", FAST) is None

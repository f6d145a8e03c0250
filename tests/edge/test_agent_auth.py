"""Optional inference auth on a real agent process: a bearer token for inference and model metadata (HTTP and
gRPC; health and /metrics stay open), and TLS with client certificates (mTLS) from a CA made with openssl."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import numpy as np
import pytest

from tests.edge.helpers import AgentProcess, mlp_ref

pytestmark = pytest.mark.timeout(180)
BODY = b'{"inputs": [{"name": "x", "shape": [1, 16], "datatype": "FP32", "data": [' + b",".join([b"0.5"] * 16) + b"]}]}"


def test_inference_token_on_http_and_grpc(infer_token_agent) -> None:  # type: ignore[no-untyped-def]
    import tritonclient.grpc as tg
    from tritonclient.utils import InferenceServerException

    a, good = infer_token_agent
    gport = a.grpc_port
    for path in ("/v2/models/tiny/infer", "/v2/models/tiny", "/v2/repository/index", "/v2/models/stats"):
        method = "POST" if path.endswith(("infer", "index")) else "GET"
        r = httpx.request(method, a.url + path, content=BODY if method == "POST" else None)
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer", path
        assert "inference token" in r.json()["error"]
        r = httpx.request(method, a.url + path, content=BODY if method == "POST" else None,
                          headers={"authorization": "Bearer nope"})
        assert r.status_code == 401, path
    r = httpx.post(a.url + "/v2/models/tiny/infer", content=BODY, headers=good)
    assert r.status_code == 200
    np.testing.assert_allclose(r.json()["outputs"][0]["data"], mlp_ref(np.full((1, 16), 0.5, np.float32)).ravel(),
                               rtol=1e-6)
    assert httpx.get(a.url + "/v2/health/ready").status_code == 200  # probes and scrapers need no token
    assert httpx.get(a.url + "/metrics").status_code == 200

    g = tg.InferenceServerClient(f"127.0.0.1:{gport}")
    assert g.is_server_live()
    i = tg.InferInput("x", [1, 16], "FP32")
    i.set_data_from_numpy(np.full((1, 16), 0.5, np.float32))
    with pytest.raises(InferenceServerException, match="inference token"):
        g.infer("tiny", [i])
    with pytest.raises(InferenceServerException, match="inference token"):
        g.get_model_metadata("tiny")
    out = g.infer("tiny", [i], headers=good).as_numpy("out")
    np.testing.assert_allclose(out, mlp_ref(np.full((1, 16), 0.5, np.float32)), rtol=1e-6)


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def test_client_certificates_are_required_with_tls_client_ca(tmp_path: Path, trust_file: Path, token_file: Path,
                                                             bundles) -> None:  # type: ignore[no-untyped-def]
    if not shutil.which("openssl"):
        pytest.skip("openssl CLI not installed")
    d = tmp_path
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / "ca.key"), "-out", str(d / "ca.pem"),
             "-days", "2", "-subj", "/CN=studio-test-ca")
    for who, cn in (("server", "127.0.0.1"), ("client", "studio-client")):
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", str(d / f"{who}.key"), "-out",
                 str(d / f"{who}.csr"), "-subj", f"/CN={cn}")
        ext = d / f"{who}.ext"
        ext.write_text("subjectAltName=IP:127.0.0.1\n" if who == "server" else "extendedKeyUsage=clientAuth\n")
        _openssl("x509", "-req", "-in", str(d / f"{who}.csr"), "-CA", str(d / "ca.pem"), "-CAkey", str(d / "ca.key"),
                 "-CAcreateserial", "-out", str(d / f"{who}.pem"), "-days", "2", "-extfile", str(ext))
    import ssl

    ctx = ssl.create_default_context(cafile=str(d / "ca.pem"))
    ctx.load_cert_chain(str(d / "client.pem"), str(d / "client.key"))
    a = AgentProcess(d / "data", trust_file, token_file,
                     extra=["--tls-cert", str(d / "server.pem"), "--tls-key", str(d / "server.key"),
                            "--tls-client-ca", str(d / "ca.pem")])
    a.scheme, a.verify = "https", ctx
    a.start()
    try:
        with httpx.Client(verify=ctx) as c:  # with the client certificate: served
            assert c.get(a.url + "/v2/health/ready").status_code == 200
            assert c.post(a.url + "/v2/models/tiny/infer", content=BODY).status_code == 404  # nothing deployed yet
        no_cert = ssl.create_default_context(cafile=str(d / "ca.pem"))  # trusts the server, shows no certificate
        with pytest.raises((httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError)):
            with httpx.Client(verify=no_cert) as c:
                c.get(a.url + "/v2/health/ready")
    finally:
        a.stop()

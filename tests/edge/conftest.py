"""Fixtures for the edge tests: keys, tiny models, bundles and a real agent process on loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.package.bundle import build_bundle
from studio.package.keys import KeyStore
from tests.edge.helpers import PASSPHRASE, AgentProcess, free_port, make_mlp, write_token


@pytest.fixture()
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> KeyStore:
    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", PASSPHRASE)
    store = KeyStore(tmp_path / "keys")
    store.generate("dev", PASSPHRASE)
    return store


@pytest.fixture()
def trust_file(keys: KeyStore, tmp_path: Path) -> Path:
    p = tmp_path / "trusted.pub"
    p.write_text(keys.export_public("dev") + "\n")
    return p


@pytest.fixture()
def signing_key(keys: KeyStore):  # type: ignore[no-untyped-def]
    return keys.load_signing_key("dev", PASSPHRASE)


@pytest.fixture()
def token_file(tmp_path: Path) -> Path:
    return write_token(tmp_path / "agent.token")


@pytest.fixture()
def bundles(tmp_path: Path, signing_key):  # type: ignore[no-untyped-def]
    """v1 and v2 of the same model name with different weights (scale 1 and 3)."""
    out = {}
    for v, scale in (("1", 1.0), ("2", 3.0)):
        model = make_mlp(tmp_path / f"src{v}" / "tiny.onnx", scale=scale)
        out[v] = Path(build_bundle(model, "generic-x86_64", signing_key, tmp_path / f"tiny-{v}.tar",
                                   version=v).bundle)
    return out


@pytest.fixture()
def agent(tmp_path: Path, trust_file: Path, token_file: Path):  # type: ignore[no-untyped-def]
    a = AgentProcess(tmp_path / "agent-data", trust_file, token_file).start()
    yield a
    a.stop()


@pytest.fixture()
def grpc_agent(tmp_path: Path, trust_file: Path, token_file: Path):  # type: ignore[no-untyped-def]
    gport = free_port()
    a = AgentProcess(tmp_path / "agent-data", trust_file, token_file, extra=["--grpc-port", str(gport)]).start()
    a.grpc_port = gport  # type: ignore[attr-defined]
    yield a
    a.stop()


@pytest.fixture()
def infer_token_agent(tmp_path: Path, trust_file: Path, token_file: Path, bundles):  # type: ignore[no-untyped-def]
    """A real agent started with ``--infer-token-file`` and a gRPC port, serving bundle v1 of ``tiny``; yields the
    agent (``grpc_port`` set) and the ``authorization`` header the inference token makes."""
    import secrets

    from studio.package.client import deploy_bundle

    infer_token = tmp_path / "infer.token"
    infer_token.write_text(secrets.token_urlsafe(32) + "\n")
    gport = free_port()
    a = AgentProcess(tmp_path / "data", trust_file, token_file,
                     extra=["--infer-token-file", str(infer_token), "--grpc-port", str(gport)]).start()
    a.grpc_port = gport  # type: ignore[attr-defined]
    try:
        deploy_bundle(bundles["1"], a.url, token_file.read_text().strip())  # management keeps its own token
        yield a, {"authorization": "Bearer " + infer_token.read_text().strip()}
    finally:
        a.stop()

"""Pushing a signing key to a real agent's trust store: refused by default, kept across restarts when allowed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from studio.core.errors import InputError
from studio.package.bundle import build_bundle
from studio.package.client import AgentClient, read_token_file
from studio.package.keys import KeyStore
from tests.edge.helpers import PASSPHRASE, AgentProcess, make_mlp


@pytest.fixture()
def other_key(keys: KeyStore) -> str:
    keys.generate("ci", PASSPHRASE)
    return keys.export_public("ci")


@pytest.fixture()
def ci_bundle(tmp_path: Path, keys: KeyStore) -> Path:
    model = make_mlp(tmp_path / "ci-src" / "tiny.onnx", scale=2.0)
    sk = keys.load_signing_key("ci", PASSPHRASE)
    return Path(build_bundle(model, "generic-x86_64", sk, tmp_path / "ci.tar", version="1").bundle)


def test_push_refused_unless_allowed(agent: AgentProcess, token_file: Path, other_key: str) -> None:
    client = AgentClient(agent.url, read_token_file(token_file))
    assert client.trust()["trust_push"] is False
    with pytest.raises(InputError) as ei:
        client.push_trust(other_key)
    assert ei.value.details["status"] == 403
    assert "--allow-trust-push" in (ei.value.hint or "") + str(ei.value.offending)
    r = httpx.post(agent.url + "/agent/trust", json={"key": other_key})
    assert r.status_code == 401  # no token: never reaches the trust store


def test_pushed_key_verifies_bundles_and_survives_restart(tmp_path: Path, trust_file: Path, token_file: Path,
                                                          keys: KeyStore, other_key: str, ci_bundle: Path) -> None:
    data = tmp_path / "agent-data"
    a = AgentProcess(data, trust_file, token_file, extra=["--allow-trust-push"]).start()
    try:
        client = AgentClient(a.url, read_token_file(token_file))
        with pytest.raises(Exception, match="untrusted key"):
            client.upload(ci_bundle)
        res = client.push_trust(other_key)
        assert res["new"] is True and res["label"] == "ci" and res["key_id"] in res["trusted_keys"]
        assert client.push_trust(other_key)["new"] is False  # the same key twice is fine
        assert client.upload(ci_bundle)["version"] == "1"
        for bad, status in (({"key": "ed25519 AAAA nope"}, 400), ({"nokey": 1}, 400), ("x" * 5000, 413)):
            body = {"content": bad} if isinstance(bad, str) else {"json": bad}
            r = httpx.post(a.url + "/agent/trust", headers={"Authorization": f"Bearer {client.token}"}, **body)
            assert r.status_code == status, r.text
            assert "error" in r.json()
    finally:
        a.stop()
    assert (data / "trusted" / f"{res['key_id']}.pub").read_text().startswith("ed25519 ")
    b = AgentProcess(data, trust_file, token_file).start()  # pushing now off: the pushed key still loads
    try:
        st = AgentClient(b.url, read_token_file(token_file)).status()
        assert res["key_id"] in st["pushed_keys"] and st["trust_push"] is False
        assert st["models"]["tiny"]["active"] == "1"  # resumed: its signer is the pushed key
    finally:
        b.stop()


def test_cli_agent_trust(tmp_path: Path, trust_file: Path, token_file: Path, keys: KeyStore, other_key: str) -> None:
    a = AgentProcess(tmp_path / "agent-data", trust_file, token_file, extra=["--allow-trust-push"]).start()
    try:
        base = [sys.executable, "-m", "studio.cli.main", "agent", "trust", "--agent", a.url,
                "--token-file", str(token_file), "--keys-dir", str(keys.root)]
        out = subprocess.run([*base, "--key", "ci"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "now trusts" in out.stdout
        bad = subprocess.run([*base, "--key", "no-such-key"], capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and "--key" in bad.stderr and "ci" in bad.stderr
        ls = subprocess.run(base, capture_output=True, text=True, timeout=60)
        assert ls.returncode == 0 and "pushed" in ls.stdout and "allowed" in ls.stdout
    finally:
        a.stop()

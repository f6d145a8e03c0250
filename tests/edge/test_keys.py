"""Keys: encrypted at rest, 0600, wrong passphrase fails cleanly, the private key never reaches any output."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.edge.trust import load_trusted_keys
from studio.package.keys import KeyStore
from tests.edge.helpers import PASSPHRASE, make_mlp


def _studio(*args: str, env_extra: dict[str, str] | None = None, cwd: Path | None = None):  # type: ignore[no-untyped-def]
    import os

    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "studio.cli.main", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def _secret_forms(store: KeyStore, name: str) -> list[str]:
    sk = store.load_signing_key(name, PASSPHRASE)
    seed = bytes(sk)
    full = bytes(sk._signing_key)  # seed + public, as libsodium stores it
    return [seed.hex(), base64.b64encode(seed).decode(), full.hex(), base64.b64encode(full).decode(),
            base64.urlsafe_b64encode(seed).decode()]


def test_generate_is_encrypted_and_0600(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "k")
    info = store.generate("dev", PASSPHRASE)
    priv = Path(info.private_path or "")
    assert stat.S_IMODE(priv.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    text = priv.read_text()
    for form in _secret_forms(store, "dev"):
        assert form not in text  # only the ciphertext is stored
    doc = json.loads(text)
    assert doc["kdf"]["name"] == "argon2id" and doc["cipher"] == "xsalsa20-poly1305"
    # the public key file is a valid trust file
    trusted = load_trusted_keys(store.public_path("dev"))
    assert trusted.ids() == [info.key_id]


def test_wrong_passphrase_fails_cleanly(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "k")
    store.generate("dev", PASSPHRASE)
    with pytest.raises(InputError, match="wrong passphrase"):
        store.load_signing_key("dev", "not the passphrase")
    model = make_mlp(tmp_path / "m" / "tiny.onnx")
    out = tmp_path / "b.tar"
    proc = _studio("package", str(model), "--board", "generic-x86_64", "--key", "dev", "--out", str(out),
                   "--keys-dir", str(store.root), env_extra={"STUDIO_KEY_PASSPHRASE": "nope"})
    assert proc.returncode != 0
    assert "wrong passphrase" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".b.tar*"))  # nothing half-written


def test_no_passphrase_without_terminal_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = _studio("keys", "--keys-dir", str(tmp_path / "k"), "generate", "dev",
                   env_extra={"STUDIO_KEY_PASSPHRASE": ""})
    assert proc.returncode != 0 and "empty passphrase" in proc.stderr
    import os

    env = {k: v for k, v in os.environ.items() if k != "STUDIO_KEY_PASSPHRASE"}
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "keys", "--keys-dir", str(tmp_path / "k"),
                           "generate", "dev"], capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0 and "STUDIO_KEY_PASSPHRASE" in proc.stderr and "Traceback" not in proc.stderr


def test_private_key_never_in_cli_output(tmp_path: Path) -> None:
    kd = tmp_path / "k"
    env = {"STUDIO_KEY_PASSPHRASE": PASSPHRASE}
    outputs = []
    for args in (["keys", "--keys-dir", str(kd), "generate", "dev"], ["keys", "--keys-dir", str(kd), "list"],
                 ["keys", "--keys-dir", str(kd), "list", "--json"],
                 ["keys", "--keys-dir", str(kd), "export-public", "dev"]):
        proc = _studio(*args, env_extra=env)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout + proc.stderr)
    model = make_mlp(tmp_path / "m" / "tiny.onnx")
    proc = _studio("--debug", "package", str(model), "--board", "generic-x86_64", "--key", "dev", "--keys-dir",
                   str(kd), "--out", str(tmp_path / "b.tar"), "--json", env_extra=env)
    assert proc.returncode == 0, proc.stderr
    outputs.append(proc.stdout + proc.stderr)
    bad = _studio("--debug", "package", str(model), "--board", "generic-x86_64", "--key", "dev", "--keys-dir",
                  str(kd), "--out", str(tmp_path / "c.tar"), env_extra={"STUDIO_KEY_PASSPHRASE": "wrong"})
    outputs.append(bad.stdout + bad.stderr)  # even a traceback (--debug) must not carry the key
    store = KeyStore(kd)
    blob = "\n".join(outputs)
    for form in _secret_forms(store, "dev"):
        assert form not in blob
    assert PASSPHRASE not in blob
    assert store.export_public("dev").split()[1] in blob  # the public key is shown, as it should be

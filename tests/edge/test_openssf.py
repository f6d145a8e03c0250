"""OpenSSF model signing beside the Ed25519 manifest, against the real `model_signing` package and its CLI.

`studio package --openssf-key` writes model.sig over the bundle's model/ that `model_signing verify key` accepts
in the extracted bundle; one changed byte is refused by both, naming the file; another key is refused with a
clear message; a folder arriving signed (by the real `model_signing sign key`) is checked before packaging; a
real `studio-agent --require-openssf` refuses unsigned and wrongly signed bundles and installs the right one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytest.importorskip("model_signing", reason="the openssf extra (model-signing) is not installed")

from cryptography.hazmat.primitives import serialization  # noqa: E402 (after the skip: the extra brings it)
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

from studio.core.errors import BundleError, InputError  # noqa: E402
from tests.edge.helpers import PASSPHRASE, AgentProcess, dev_keys, make_mlp  # noqa: E402

BIN = Path(sys.executable).parent


def ec_key(folder: Path, name: str, password: bytes | None = None) -> tuple[Path, Path]:
    """An ECDSA P-256 key pair as PEM files (NAME.pem private, NAME.pub public)."""
    key = ec.generate_private_key(ec.SECP256R1())
    enc = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    priv, pub = folder / f"{name}.pem", folder / f"{name}.pub"
    priv.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, enc))
    pub.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    return priv, pub


def model_folder(root: Path) -> Path:
    src = root / "src"
    make_mlp(src / "model.onnx")
    (src / "config.json").write_text(json.dumps({"model_type": "mlp"}))
    (src / "tokenizer.json").write_text("{}")
    return src


def run(*cmd: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "STUDIO_KEY_PASSPHRASE": PASSPHRASE, **(env or {})})


def studio(*args: str | Path, **kw) -> subprocess.CompletedProcess:  # type: ignore[no-untyped-def]
    return run(BIN / "studio", *args, **kw)


def model_signing_cli(*args: str | Path) -> subprocess.CompletedProcess:
    return run(BIN / "model_signing", *args)


def flip_byte(path: Path, offset: int = -1) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.fixture()
def setup(tmp_path: Path):  # type: ignore[no-untyped-def]
    dev = dev_keys(tmp_path)
    k1, k1pub = ec_key(tmp_path, "publisher")
    _, k2pub = ec_key(tmp_path, "stranger")
    return tmp_path, dev, (k1, k1pub), k2pub


def test_package_signature_is_accepted_by_model_signing_and_tampering_refused_by_both(setup) -> None:  # type: ignore[no-untyped-def]
    root, dev, (k1, k1pub), k2pub = setup
    src = model_folder(root)
    bundle = root / "out" / "mlp.tar"
    out = studio("package", src, "--board", "generic-x86_64", "--key", "dev", "--keys-dir", root / "keys",
                 "--out", bundle, "--openssf-key", k1, "--json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    assert rep["openssf"]["file"] == "model.sig" and rep["openssf"]["files"] == 3
    assert not list(bundle.parent.glob(".openssf-stage-*"))  # the staging links are gone
    with tarfile.open(bundle) as tf:
        names = tf.getnames()
        manifest = json.loads(tf.extractfile("manifest.json").read())  # type: ignore[union-attr]
    assert "model.sig" in names and "model.sig" in {f["path"] for f in manifest["files"]}  # Ed25519 covers it too

    x = root / "x"
    with tarfile.open(bundle) as tf:
        tf.extractall(x, filter="data")
    ok = model_signing_cli("verify", "key", "--signature", x / "model.sig", "--public_key", k1pub, x / "model")
    assert ok.returncode == 0 and "Verification succeeded" in ok.stdout, ok.stdout + ok.stderr

    mine = studio("verify", bundle, "--trust", dev.trust, "--openssf-trust", k1pub)
    assert mine.returncode == 0, mine.stderr
    fingerprint = rep["openssf"]["key_sha256"][:16]
    assert f"signed by ECDSA key sha256:{fingerprint}" in mine.stdout and str(k1pub) in mine.stdout
    unchecked = studio("verify", bundle, "--trust", dev.trust)
    assert unchecked.returncode == 0 and "NOT checked" in unchecked.stdout and fingerprint in unchecked.stdout

    flip_byte(x / "model" / "model.onnx")
    theirs = model_signing_cli("verify", "key", "--signature", x / "model.sig", "--public_key", k1pub, x / "model")
    assert theirs.returncode != 0 and "Hash mismatch for 'model.onnx'" in theirs.stderr, theirs.stderr
    mine = studio("verify", x / "model", "--openssf-trust", k1pub, "--openssf-signature", x / "model.sig")
    assert mine.returncode == 2 and "changed: model.onnx" in mine.stderr and "model.onnx" in mine.stderr

    other = studio("verify", bundle, "--trust", dev.trust, "--openssf-trust", k2pub)
    assert other.returncode == 2 and "made with another key" in other.stderr and str(k2pub) in other.stderr
    theirs = model_signing_cli("verify", "key", "--signature", x / "model.sig", "--public_key", k2pub, x / "model")
    assert theirs.returncode != 0 and "Key mismatch" in theirs.stderr


def test_a_folder_arriving_signed_is_checked_before_packaging(setup) -> None:  # type: ignore[no-untyped-def]
    root, dev, (k1, k1pub), k2pub = setup
    src = model_folder(root)
    signed = model_signing_cli("sign", "key", "--private_key", k1, "--signature", src / "model.sig", src)
    assert signed.returncode == 0, signed.stderr
    common = ["--board", "generic-x86_64", "--key", "dev", "--keys-dir", root / "keys", "--json"]

    out = studio("package", src, *common, "--out", root / "a.tar", "--openssf-trust", k1pub)
    assert out.returncode == 0, out.stderr
    arriving = json.loads(out.stdout)["openssf_source"]
    assert arriving["method"] == "key" and arriving["trusted_by"] == str(k1pub) and arriving["files"] == 3

    quiet = studio("package", src, *common, "--out", root / "b.tar")
    assert quiet.returncode == 0
    assert any("NOT checked" in w and "--openssf-trust" in w for w in json.loads(quiet.stdout)["warnings"])

    assert studio("verify", src, "--openssf-trust", k1pub).returncode == 0
    other = studio("package", src, *common, "--out", root / "c.tar", "--openssf-trust", k2pub)
    assert other.returncode == 2 and "another key" in other.stderr and not (root / "c.tar").exists()

    flip_byte(src / "tokenizer.json", 0)
    bad = studio("package", src, *common, "--out", root / "d.tar", "--openssf-trust", k1pub)
    assert bad.returncode == 2 and "changed: tokenizer.json" in bad.stderr, bad.stderr
    assert str(src / "tokenizer.json") in bad.stderr and not (root / "d.tar").exists()  # nothing half-written


def test_bad_input_is_named(setup) -> None:  # type: ignore[no-untyped-def]
    from studio.edge.openssf import OpenSSFTrust, read_signature, verify_folder

    root, _dev, (k1, k1pub), _ = setup
    with pytest.raises(InputError, match="is a private key"):
        OpenSSFTrust.from_files([k1])
    junk = root / "junk.pem"
    junk.write_text("hello")
    with pytest.raises(InputError, match="not a PEM public key"):
        OpenSSFTrust.from_files([junk])
    with pytest.raises(InputError, match="go together"):
        OpenSSFTrust.from_files([], identity="me@example.com")
    src = model_folder(root)
    with pytest.raises(BundleError, match="no OpenSSF signature"):
        verify_folder(src, OpenSSFTrust.from_files([k1pub]))
    (src / "model.sig").write_text("{}")
    with pytest.raises(BundleError, match="not an OpenSSF model signature"):
        read_signature(src / "model.sig")
    no_trust = studio("verify", src)
    assert no_trust.returncode == 2 and "--openssf-trust" in no_trust.stderr


def test_encrypted_signing_key_reads_its_password_from_the_environment(setup) -> None:  # type: ignore[no-untyped-def]
    root, _dev, _k1, _ = setup
    enc, encpub = ec_key(root, "locked", password=b"s3cret")
    src = model_folder(root)
    args = ["package", src, "--board", "generic-x86_64", "--key", "dev", "--keys-dir", root / "keys",
            "--openssf-key", enc]
    refused = studio(*args, "--out", root / "e.tar")
    assert refused.returncode == 2 and str(enc) in refused.stderr and not (root / "e.tar").exists()
    ok = studio(*args, "--out", root / "f.tar", env={"STUDIO_OPENSSF_KEY_PASSWORD": "s3cret"})
    assert ok.returncode == 0, ok.stderr
    dev_trust = root / "trusted.pub"
    assert studio("verify", root / "f.tar", "--trust", dev_trust, "--openssf-trust", encpub).returncode == 0


def test_agent_requires_the_openssf_signature(setup) -> None:  # type: ignore[no-untyped-def]
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle

    root, dev, (k1, k1pub), _ = setup
    k2priv, _ = ec_key(root, "other")  # signs the bundle the agent refuses
    src = model_folder(root)
    plain = build_bundle(src, "generic-x86_64", dev.signing_key, root / "plain.tar", version="1").bundle
    wrong = build_bundle(src, "generic-x86_64", dev.signing_key, root / "wrong.tar", version="2",
                         openssf_key=k2priv).bundle
    good = build_bundle(src, "generic-x86_64", dev.signing_key, root / "good.tar", version="3",
                        openssf_key=k1).bundle
    agent = AgentProcess(root / "data", dev.trust, dev.token, extra=["--require-openssf", str(k1pub)]).start()
    token = dev.token.read_text().strip()
    try:
        with pytest.raises(BundleError) as exc:
            deploy_bundle(Path(plain), agent.url, token)
        assert "carries no OpenSSF signature" in exc.value.message and "--openssf-key" in (exc.value.hint or "")
        with pytest.raises(BundleError) as exc:
            deploy_bundle(Path(wrong), agent.url, token)
        assert "another key" in exc.value.message and "staging" not in exc.value.message
        rep = deploy_bundle(Path(good), agent.url, token)
        assert rep.version == "3" and rep.openssf and rep.openssf["method"] == "key"
        assert "OpenSSF signature by ECDSA key sha256:" in rep.render()
    finally:
        agent.stop()
    log = agent.log.read_text()
    assert "bundles must carry an OpenSSF signature of model/ verified by" in log and str(k1pub) in log


def _ca_and_leaf(folder: Path, name: str):  # type: ignore[no-untyped-def]
    """A CA certificate and a code-signing leaf it issued (e-mail SAN), as PEM files: (ca.crt, leaf.pem, leaf.crt)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name} CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now)
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Model Publisher")]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.RFC822Name("publisher@example.com")]), critical=False)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                         crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / f"{name}-ca.crt", folder / f"{name}-leaf.pem", folder / f"{name}-leaf.crt"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    paths[2].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    return paths


def test_certificate_signatures_say_who_signed_and_need_the_right_ca(tmp_path: Path) -> None:
    import model_signing

    src = model_folder(tmp_path)
    ca, leaf_key, leaf = _ca_and_leaf(tmp_path, "Publisher")
    other_ca, _, _ = _ca_and_leaf(tmp_path, "Other")
    model_signing.signing.Config().use_certificate_signer(
        private_key=leaf_key, signing_certificate=leaf, certificate_chain=[ca]).sign(src, tmp_path / "src.sig")
    ok = studio("verify", src, "--openssf-trust", ca)  # the signature beside the folder: src.sig
    assert ok.returncode == 0, ok.stderr
    assert "signed by certificate CN=Model Publisher <publisher@example.com>, issued by CN=Publisher CA" in ok.stdout
    bad = studio("verify", src, "--openssf-trust", other_ca)
    assert bad.returncode == 2 and "does not verify" in bad.stderr and str(tmp_path / "src.sig") in bad.stderr
    keyed = studio("verify", src, "--openssf-trust", ec_key(tmp_path, "k")[1])
    assert keyed.returncode == 2 and "no CA certificate to check it against" in keyed.stderr


def test_a_sigstore_signature_asks_for_its_identity_and_is_checked_offline(tmp_path: Path) -> None:
    """A Sigstore-shaped bundle (a certificate with an e-mail SAN and Fulcio's issuer extension, a log entry)
    names the identity to pass; with one, the check runs offline against the embedded trust root and refuses
    a certificate Fulcio never issued, without touching the network."""
    import base64

    from studio.edge.openssf import OpenSSFTrust, read_signature, verify_folder

    src = model_folder(tmp_path)
    _, _, leaf = _ca_and_leaf(tmp_path, "Fake")
    from cryptography import x509

    der = x509.load_pem_x509_certificate(leaf.read_bytes()).public_bytes(serialization.Encoding.DER)
    k1, _ = ec_key(tmp_path, "k1")
    import model_signing

    model_signing.signing.Config().use_elliptic_key_signer(private_key=k1).sign(src, tmp_path / "key.sig")
    doc = json.loads((tmp_path / "key.sig").read_text())
    b64 = lambda raw: base64.b64encode(raw).decode()  # noqa: E731
    entry = {"logIndex": "1", "logId": {"keyId": b64(b"k" * 32)}, "kindVersion": {"kind": "dsse", "version": "0.0.1"},
             "integratedTime": "1700000000", "canonicalizedBody": b64(b"{}"),
             "inclusionProof": {"logIndex": "1", "rootHash": b64(b"r" * 32), "treeSize": "2", "hashes": [],
                                "checkpoint": {"envelope": "x"}}}
    doc["verificationMaterial"] = {"certificate": {"rawBytes": b64(der)}, "tlogEntries": [entry]}
    (src / "model.sig").write_text(json.dumps(doc))
    info = read_signature(src / "model.sig")
    assert info.method == "sigstore" and info.identity == "publisher@example.com"
    with pytest.raises(InputError) as exc:
        verify_folder(src, OpenSSFTrust.from_files([]))
    assert "--openssf-identity publisher@example.com" in (exc.value.hint or "")
    with pytest.raises(BundleError, match="does not verify"):
        verify_folder(src, OpenSSFTrust.from_files([], "publisher@example.com", "https://issuer.example"))

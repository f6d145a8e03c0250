"""OpenSSF model signing (the `model_signing` package, 1.1) beside the studio's Ed25519 manifest.

A signature is a Sigstore bundle (JSON) over a model folder: per-file digests in an in-toto statement, signed
by an ECDSA key ("key" method), a certificate chained to a CA ("certificate") or a Sigstore keyless
certificate with a transparency-log entry ("sigstore"). It travels as ``model.sig`` inside the folder or as
``<folder>.sig`` beside it (a bundle holds ``model/`` and ``model.sig``, so `model_signing verify key
--signature model.sig --public_key KEY.pub model` works on an extracted bundle).

:func:`read_signature` says who signed what from the file alone (no `model_signing` needed);
:func:`verify_folder` checks it with `model_signing` (imported only then: it brings sigstore and cryptography)
and raises :class:`BundleError` naming the changed, missing or extra file, or the key that does not match.
Used by `studio verify`, `studio package` (a signed source folder), the Package page and `studio-agent
--require-openssf`; no torch, no Qt.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import BundleError, DependencyMissing, InputError
from studio.core.reports import Report

SIGNATURE_FILE = "model.sig"
BUNDLE_MEDIA = "application/vnd.dev.sigstore.bundle"
FULCIO_ISSUER_OIDS = ("1.3.6.1.4.1.57264.1.8", "1.3.6.1.4.1.57264.1.1")  # OIDC issuer (v2, then v1)


def model_signing() -> Any:
    """The `model_signing` package, or DependencyMissing naming the extra that installs it."""
    try:
        import model_signing
        import model_signing.hashing
        import model_signing.signing
        import model_signing.verifying
    except ImportError as exc:
        raise DependencyMissing.for_module("model_signing", "openssf", "OpenSSF model signing") from exc
    return model_signing


def model_signing_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("model-signing")
    except PackageNotFoundError:
        return "not installed"


def key_fingerprint(pem: bytes) -> str:
    """What a key-method signature records as its key hint: SHA-256 of the public key's PEM (SubjectPublicKeyInfo)."""
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_public_key(pem)
    except ValueError:
        private = serialization.load_pem_private_key(pem, None)
        key = private.public_key()
    spki = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(spki).hexdigest()


@dataclass
class OpenSSFSignature:
    """What a signature file says (read without verifying anything)."""

    path: str
    method: str  # "key" | "certificate" | "sigstore"
    key_hint: str = ""  # key method: SHA-256 of the signer's public key PEM
    subject: str = ""  # certificate / sigstore: the signing certificate's subject
    identity: str = ""  # the certificate's SAN (an e-mail, URI) for sigstore identities
    issuer: str = ""  # sigstore: the OIDC issuer; certificate: the certificate's issuer
    files: list[str] = field(default_factory=list)
    serialization: dict[str, Any] = field(default_factory=dict)

    def signer(self) -> str:
        if self.method == "key":
            return f"ECDSA key sha256:{self.key_hint[:16]}" if self.key_hint else "an ECDSA key (no key hint)"
        if self.method == "sigstore":
            return f"{self.identity or self.subject} (Sigstore, issuer {self.issuer or 'unknown'})"
        return f"certificate {self.subject}" + (f" <{self.identity}>" if self.identity else "") + \
            (f", issued by {self.issuer}" if self.issuer else "")


@dataclass
class OpenSSFCheck(Report):
    """A verified OpenSSF signature: who signed, which trust answered, what it covered."""

    folder: str
    signature: str
    method: str
    signer: str
    trusted_by: str  # the key file, CA file or identity policy that matched
    files: int
    seconds: float
    tool: str = ""  # model_signing and its version
    ok: bool = True
    schema_version: int = 1

    def render(self) -> str:
        return (f"OK  OpenSSF signature {self.signature}: {self.files} files of {self.folder} signed by {self.signer} "
                f"(trusted: {self.trusted_by}; {self.method} method, checked by {self.tool} in {self.seconds:.2f} s)")


@dataclass
class OpenSSFTrust:
    """What an OpenSSF signature is checked against: public keys (key method), CA certificates (certificate
    method) and a Sigstore identity + issuer (sigstore method, verified offline with the trust root the
    sigstore package embeds)."""

    keys: list[Path] = field(default_factory=list)
    certificates: list[Path] = field(default_factory=list)
    identity: str | None = None
    issuer: str | None = None

    @classmethod
    def from_files(cls, files: list[Path | str] | None, identity: str | None = None,
                   issuer: str | None = None, flag: str = "--openssf-trust") -> OpenSSFTrust:
        """Sort PEM files into public keys and CA certificates by their headers; anything else is refused."""
        out = cls(identity=identity, issuer=issuer)
        for f in files or []:
            p = Path(f)
            try:
                text = p.read_bytes()
            except OSError as exc:
                raise InputError(f"cannot read {flag} file {p}: {exc.strerror}", offending=str(p),
                                 hint="pass the publisher's PEM public key (or CA certificate)") from None
            if b"-----BEGIN CERTIFICATE-----" in text:
                out.certificates.append(p)
            elif b"-----BEGIN PUBLIC KEY-----" in text:
                out.keys.append(p)
            elif b"PRIVATE KEY-----" in text:
                raise InputError(f"{p} is a private key; {flag} takes the public key", offending=str(p),
                                 hint=f"openssl pkey -in {p} -pubout -out {p.with_suffix('.pub')}")
            else:
                raise InputError(f"{p} is not a PEM public key or certificate", offending=str(p),
                                 hint="it should start with -----BEGIN PUBLIC KEY----- (key method) or "
                                      "-----BEGIN CERTIFICATE----- (certificate method)")
        if bool(identity) != bool(issuer):
            raise InputError("a Sigstore identity and its OIDC issuer go together", offending=identity or issuer,
                             hint="pass both --openssf-identity and --openssf-issuer")
        return out

    def __bool__(self) -> bool:
        return bool(self.keys or self.certificates or self.identity)

    def describe(self) -> str:
        parts = [str(k) for k in self.keys] + [f"CA {c}" for c in self.certificates]
        if self.identity:
            parts.append(f"Sigstore {self.identity} ({self.issuer})")
        return ", ".join(parts) or "nothing"


def find_signature(folder: Path | str) -> Path | None:
    """``model.sig`` inside the folder, else ``<folder>.sig`` beside it; None when neither exists."""
    folder = Path(folder)
    for p in (folder / SIGNATURE_FILE, folder.parent / f"{folder.name}.sig"):
        if p.is_file():
            return p
    return None


def _bad(path: Path, why: str) -> BundleError:
    return BundleError(f"{path} is not an OpenSSF model signature: {why}", offending=str(path),
                       hint="it should be the Sigstore bundle `model_signing sign` wrote; sign the model again")


def _certificate_fields(der: bytes, out: OpenSSFSignature) -> None:
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    out.subject = cert.subject.rfc4514_string()
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = san.get_values_for_type(x509.RFC822Name) + san.get_values_for_type(x509.UniformResourceIdentifier)
        out.identity = names[0] if names else ""
    except x509.ExtensionNotFound:
        pass
    out.issuer = cert.issuer.rfc4514_string()
    for oid in FULCIO_ISSUER_OIDS:
        try:
            raw = cert.extensions.get_extension_for_oid(x509.ObjectIdentifier(oid)).value.value
        except x509.ExtensionNotFound:
            continue
        text = raw.decode("utf-8", "replace")
        out.issuer = text[2:] if oid == FULCIO_ISSUER_OIDS[0] and len(text) > 2 and text[0] == "\x0c" else text
        break


def read_signature(path: Path | str) -> OpenSSFSignature:
    """Parse a signature file: its method, signer and the files its statement lists."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}", offending=str(path), hint="check the path") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise _bad(path, f"not JSON ({exc})") from None
    if not isinstance(doc, dict) or not str(doc.get("mediaType", "")).startswith(BUNDLE_MEDIA):
        raise _bad(path, "no Sigstore bundle mediaType")
    vm = doc.get("verificationMaterial") or {}
    env = doc.get("dsseEnvelope") or {}
    if "publicKey" in vm:
        out = OpenSSFSignature(str(path), "key", key_hint=str((vm.get("publicKey") or {}).get("hint") or ""))
    elif "certificate" in vm or "x509CertificateChain" in vm:
        method = "sigstore" if vm.get("tlogEntries") else "certificate"
        out = OpenSSFSignature(str(path), method)
        raw = (vm.get("certificate") or {}).get("rawBytes") or \
            next(iter((vm.get("x509CertificateChain") or {}).get("certificates") or []), {}).get("rawBytes")
        if raw:
            try:
                _certificate_fields(base64.b64decode(raw), out)
            except (ImportError, ValueError, binascii.Error):
                out.subject = "unreadable certificate"
    else:
        raise _bad(path, "no public key or certificate in its verification material")
    try:
        statement = json.loads(base64.b64decode(env["payload"]))
        predicate = statement.get("predicate") or {}
        out.files = sorted(str(r.get("name")) for r in predicate.get("resources") or [])
        out.serialization = dict(predicate.get("serialization") or {})
    except (KeyError, TypeError, ValueError, binascii.Error):
        raise _bad(path, "no readable in-toto statement in its DSSE envelope") from None
    return out


def _diff_items(message: str) -> list[str]:
    """model_signing 1.1 raises ``Signature mismatch: [...]`` with a Python list of one line per difference."""
    import ast

    try:
        items = ast.literal_eval(message.split(":", 1)[1].strip())
    except (IndexError, ValueError, SyntaxError):
        return [message]
    return [str(i) for i in items] if isinstance(items, list) else [message]


def _mismatch(folder: Path, sig: Path, message: str) -> BundleError:
    """model_signing's "Signature mismatch" as an error naming the changed, added and missing files."""
    changed, extra, missing = [], [], []
    for item in _diff_items(message):
        if item.startswith("Hash mismatch for '") and "': " in item:
            changed.append(item[len("Hash mismatch for '"):item.index("': ")])
        elif item.startswith(("Extra files", "Missing files")) and "': " in item:
            names = [n.strip() for n in item.split("': ", 1)[1].split(",") if n.strip()]
            (extra if item.startswith("Extra") else missing).extend(names)
    parts = ([f"changed: {', '.join(changed)}"] if changed else []) + \
        ([f"not signed (added): {', '.join(extra)}"] if extra else []) + \
        ([f"missing: {', '.join(missing)}"] if missing else [])
    first = (changed or extra or missing or [""])[0]
    return BundleError(f"{folder} does not match its OpenSSF signature {sig.name}: " + ("; ".join(parts) or message),
                       offending=str(folder / first) if first else str(folder),
                       hint="the files changed after they were signed: get the model again from its publisher, or "
                            "have it signed again", details={"changed": changed, "added": extra, "missing": missing})


def _hashing_config(ms: Any, info: OpenSSFSignature, folder: Path, sig: Path) -> Any:
    """The serialization the signature records (files or shards, hash, symlinks, ignored paths), ignoring the
    signature file itself when it lies inside the folder, as `model_signing verify` does."""
    ser = info.serialization
    allow = bool(ser.get("allow_symlinks", False))
    algo = str(ser.get("hash_type") or "sha256")
    hc = ms.hashing.Config()
    if ser.get("method") == "shards":
        hc.use_shard_serialization(hashing_algorithm=algo, shard_size=int(ser.get("shard_size") or 1_000_000_000),
                                   allow_symlinks=allow)
    else:
        hc.use_file_serialization(hashing_algorithm=algo, allow_symlinks=allow)
    ignored = [folder / p for p in ser.get("ignore_paths") or []]
    if sig.resolve().is_relative_to(folder.resolve()):
        ignored.append(sig)
    return hc.set_ignored_paths(paths=ignored, ignore_git_paths=True).set_allow_symlinks(allow)


def _pick_key(info: OpenSSFSignature, sig: Path, keys: list[Path]) -> Path:
    prints = {k: key_fingerprint(k.read_bytes()) for k in keys}
    match = next((k for k, fp in prints.items() if fp == info.key_hint), None)
    if match is None and not info.key_hint and len(keys) == 1:
        return keys[0]  # an old signature without a key hint: the one key decides
    if match is None:
        trusted = ", ".join(f"{k} (sha256:{fp[:16]})" for k, fp in prints.items())
        raise BundleError(f"the OpenSSF signature {sig} was made with another key (sha256:{info.key_hint[:16]}), "
                          f"not a trusted one: {trusted}", offending=str(sig),
                          hint="check you hold the publisher's public key for this model; a signature by an "
                               "unknown key proves nothing about who made it")
    return match


def _offline_trust_config(tmp: Path) -> Path:
    """The Sigstore production trust root from the sigstore package's embedded copy (no network)."""
    import logging

    from sigstore.models import ClientTrustConfig

    tuf_log = logging.getLogger("sigstore._internal.tuf")
    level = tuf_log.level
    tuf_log.setLevel(logging.ERROR)  # "loaded in offline mode": offline is the point here
    try:
        cfg = ClientTrustConfig.production(offline=True)
    finally:
        tuf_log.setLevel(level)
    path = tmp / "trust_config.json"
    path.write_text(cfg._inner.to_json(), encoding="utf-8")
    return path


def verify_folder(folder: Path | str, trust: OpenSSFTrust, signature: Path | str | None = None) -> OpenSSFCheck:
    """Check ``folder`` against its OpenSSF signature and ``trust``; BundleError names what does not match."""
    import tempfile

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder} is not a folder", offending=str(folder), hint="pass the model folder")
    sig = Path(signature) if signature is not None else find_signature(folder)
    if sig is None:
        raise BundleError(f"no OpenSSF signature with {folder} ({folder / SIGNATURE_FILE} or "
                          f"{folder.parent / (folder.name + '.sig')})", offending=str(folder),
                          hint="sign it with `model_signing sign key --private_key KEY.pem MODEL` or package with "
                               "`studio package --openssf-key KEY.pem`")
    info = read_signature(sig)
    ms = model_signing()
    t0 = time.perf_counter()
    cfg = ms.verifying.Config()
    with tempfile.TemporaryDirectory(prefix="studio-openssf-") as tmp:
        if info.method == "key":
            if not trust.keys:
                raise InputError(f"{sig} is signed with {info.signer()}; no public key to check it against",
                                 offending=str(sig), hint="pass the publisher's public key: --openssf-trust KEY.pub")
            trusted_by = _pick_key(info, sig, trust.keys)
            cfg.use_elliptic_key_verifier(public_key=trusted_by)
        elif info.method == "certificate":
            if not trust.certificates:
                raise InputError(f"{sig} is signed with {info.signer()}; no CA certificate to check it against",
                                 offending=str(sig), hint="pass the CA chain: --openssf-trust CA.pem")
            trusted_by = ", ".join(map(str, trust.certificates))
            cfg.use_certificate_verifier(certificate_chain=trust.certificates)
        else:
            if not trust.identity:
                raise InputError(f"{sig} is a Sigstore signature by {info.signer()}; no identity policy to check "
                                 "it against", offending=str(sig), hint="pass --openssf-identity "
                                 f"{info.identity or 'EMAIL'} --openssf-issuer {info.issuer or 'URL'}")
            trusted_by = f"Sigstore identity {trust.identity} from {trust.issuer} (embedded trust root, offline)"
            cfg.use_sigstore_verifier(identity=trust.identity, oidc_issuer=str(trust.issuer),
                                      trust_config=_offline_trust_config(Path(tmp)))
        cfg.set_hashing_config(_hashing_config(ms, info, folder, sig))
        try:
            cfg.verify(folder, sig)
        except ValueError as exc:
            text = str(exc)
            if text.startswith("Signature mismatch"):
                raise _mismatch(folder, sig, text) from None
            raise BundleError(f"the OpenSSF signature {sig} does not verify: {text}", offending=str(sig),
                              hint="it was not made by the trusted signer, or it was altered") from None
        except Exception as exc:  # cryptography's InvalidSignature, sigstore's VerificationError, ...
            raise BundleError(f"the OpenSSF signature {sig} does not verify: {type(exc).__name__}: {exc}".rstrip(": "),
                              offending=str(sig), hint="it was not made by the trusted signer, or it was "
                                                       "altered after signing") from None
    return OpenSSFCheck(folder=str(folder), signature=str(sig), method=info.method, signer=info.signer(),
                        trusted_by=str(trusted_by), files=len(info.files), seconds=round(time.perf_counter() - t0, 3),
                        tool=f"model_signing {model_signing_version()}")


def sign_folder(folder: Path | str, private_key: Path | str, signature: Path | str,
                password: str | None = None, allow_symlinks: bool = False) -> OpenSSFSignature:
    """Sign ``folder`` with an ECDSA private key (PEM) into ``signature`` (outside the folder); symbolic links
    are followed only with ``allow_symlinks`` (a staging folder of links to the real files)."""
    ms = model_signing()
    key = Path(private_key)
    try:
        signer = ms.signing.Config().use_elliptic_key_signer(private_key=key, password=password.encode() if password else None)
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"cannot use {key} as an OpenSSF signing key: {exc}", offending=str(key),
                         hint="an ECDSA P-256/P-384/P-521 private key in PEM, e.g. `openssl ecparam -name prime256v1 "
                              "-genkey -noout -out key.pem`; an encrypted key reads its password from "
                              "STUDIO_OPENSSF_KEY_PASSWORD") from None
    signer.set_hashing_config(ms.hashing.Config().use_file_serialization(allow_symlinks=allow_symlinks)
                              .set_ignored_paths(paths=[], ignore_git_paths=True))
    signer.sign(Path(folder), Path(signature))
    return read_signature(signature)


BUNDLE_MODEL_DIR = "model"


def check_bundle(bundle: Path | str, trusted: Any, trust: OpenSSFTrust | None) -> Any:
    """`studio verify BUNDLE`: the Ed25519 check, then the OpenSSF signature of ``model/`` when the bundle carries
    one: verified against ``trust`` in a temporary extraction, else described as not checked. A bundle without
    one, when ``trust`` asks for it, is a BundleError."""
    import tarfile
    import tempfile

    from studio.edge.verify import extract_verified, verify_bundle

    rep = verify_bundle(bundle, trusted)
    with tarfile.open(bundle) as tf:
        member = next((m for m in tf.getmembers() if m.name == SIGNATURE_FILE and m.isfile()), None)
        raw = tf.extractfile(member).read() if member is not None else None  # type: ignore[union-attr]
    if raw is None:
        if trust:
            raise BundleError(f"{bundle} carries no OpenSSF signature ({SIGNATURE_FILE})", offending=str(bundle),
                              hint="package it with `studio package --openssf-key KEY.pem`")
        return rep
    with tempfile.TemporaryDirectory(prefix="studio-openssf-") as tmp:
        if not trust:
            (Path(tmp) / SIGNATURE_FILE).write_bytes(raw)
            info = read_signature(Path(tmp) / SIGNATURE_FILE)
            rep.openssf = {"ok": False, "signature": SIGNATURE_FILE, "signer": info.signer(), "files": len(info.files),
                           "note": "pass --openssf-trust KEY.pub to check it"}
            return rep
        dest = Path(tmp) / "bundle"
        extract_verified(bundle, dest, trusted)
        check = verify_folder(dest / BUNDLE_MODEL_DIR, trust, dest / SIGNATURE_FILE)
    check.folder, check.signature = f"{bundle}:{BUNDLE_MODEL_DIR}/", f"{bundle}:{SIGNATURE_FILE}"
    rep.openssf = check.to_dict()
    return rep

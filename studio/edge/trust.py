"""Trusted Ed25519 public keys: the one-line key format, key ids, and the signature check verifiers run.

Why here, below both sides: the studio (``studio.package.keys`` signs, ``studio triton`` copies trust files) and
the board (``studio.agent`` checks uploads, keeps pushed keys) read the same key lines and must agree on a
key's id; neither side owns that. Private keys and passphrases stay in ``studio.package.keys``.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any

from studio.core.errors import BundleError, DependencyMissing, InputError


def load_nacl() -> Any:
    """PyNaCl's modules, imported on first use; a missing PyNaCl is a DependencyMissing naming the extra."""
    try:
        import nacl.exceptions
        import nacl.pwhash
        import nacl.secret
        import nacl.signing
        import nacl.utils
    except ImportError as exc:  # pragma: no cover - the agent/core extras pull it
        raise DependencyMissing.for_module("pynacl", "agent", "signing") from exc
    return nacl


def key_id(public_key: bytes) -> str:
    """Short, stable fingerprint of a public key (first 16 hex digits of its SHA-256)."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def encode_public(public_key: bytes) -> str:
    return base64.b64encode(public_key).decode("ascii")


def public_key_line(public_key: bytes, name: str) -> str:
    return f"ed25519 {encode_public(public_key)} {name}"


def _decode_key_token(tok: str) -> bytes | None:
    tok = tok.strip()
    if re.fullmatch(r"[0-9a-fA-F]{64}", tok):
        return bytes.fromhex(tok)
    try:
        raw = base64.b64decode(tok, validate=True)
    except ValueError:
        return None
    return raw if len(raw) == 32 else None


def parse_public_keys(text: str, source: str = "") -> list[bytes]:
    """Lines ``ed25519 <base64> [name]`` (or a bare base64 / hex key); '#' starts a comment."""
    keys: list[bytes] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        tok = parts[1] if parts[0].lower() == "ed25519" and len(parts) > 1 else parts[0]
        raw = _decode_key_token(tok)
        if raw is None:
            raise InputError(f"not an Ed25519 public key at line {n}", offending=f"{source}:{n}",
                             hint="expected `ed25519 <base64> NAME`, as written by `studio keys export-public`")
        keys.append(raw)
    return keys


class TrustedKeys:
    """The public keys a verifier accepts, by key id."""

    def __init__(self, keys: list[bytes] | None = None) -> None:
        self.keys: dict[str, bytes] = {}
        for k in keys or []:
            self.add(k)

    def add(self, public_key: bytes) -> None:
        if len(public_key) != 32:
            raise InputError("an Ed25519 public key is 32 bytes", hint="use `studio keys export-public NAME`")
        self.keys[key_id(public_key)] = bytes(public_key)

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, public_key: bytes) -> bool:
        return self.keys.get(key_id(public_key)) == public_key

    def ids(self) -> list[str]:
        return sorted(self.keys)

    def verify(self, public_key: bytes, message: bytes, signature: bytes) -> None:
        """Raise BundleError unless ``public_key`` is trusted and the signature over ``message`` is valid."""
        nacl = load_nacl()
        if public_key not in self:
            raise BundleError(f"bundle is signed by an untrusted key ({key_id(public_key)})",
                              offending="manifest.sig",
                              hint="add the signer's public key to the trust list (--trust), "
                                   f"trusted ids: {', '.join(self.ids()) or 'none'}")
        try:
            nacl.signing.VerifyKey(public_key).verify(message, signature)
        except (nacl.exceptions.BadSignatureError, ValueError):
            raise BundleError("manifest signature does not verify: the manifest was changed after signing",
                              offending="manifest.json", hint="rebuild the bundle with `studio package`") from None


def load_trusted_keys(*specs: str | Path | bytes | TrustedKeys) -> TrustedKeys:
    """Each spec: a TrustedKeys, raw 32-byte key, key file (one or more lines), folder of ``*.pub``, or a key text."""
    trusted = TrustedKeys()
    for spec in specs:
        if isinstance(spec, TrustedKeys):
            for k in spec.keys.values():
                trusted.add(k)
            continue
        if isinstance(spec, bytes):
            trusted.add(spec)
            continue
        p = Path(spec)
        if p.is_dir():
            for f in sorted(p.glob("*.pub")):
                for k in parse_public_keys(f.read_text(encoding="utf-8"), str(f)):
                    trusted.add(k)
        elif p.is_file():
            for k in parse_public_keys(p.read_text(encoding="utf-8"), str(p)):
                trusted.add(k)
        else:
            raw = _decode_key_token(str(spec).split()[1] if str(spec).lower().startswith("ed25519 ")
                                    else str(spec))
            if raw is None:
                raise InputError(f"trust key '{spec}' is neither a file, a folder nor a public key",
                                 offending=str(spec), hint="pass a .pub file from `studio keys export-public`")
            trusted.add(raw)
    return trusted

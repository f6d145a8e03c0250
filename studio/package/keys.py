"""Ed25519 signing keys: private keys encrypted at rest (Argon2id -> SecretBox), public keys as one-line files.

Private key file ``NAME.key`` (JSON, mode 0600) holds only the encrypted seed; the passphrase comes from
``STUDIO_KEY_PASSPHRASE`` or a prompt. Nothing here ever prints, logs or returns the seed as text.
Public key file ``NAME.pub`` is one line ``ed25519 <base64> NAME`` (several such lines make a trust file).
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import BundleError, DependencyMissing, InputError
from studio.core.paths import config_dir

PASSPHRASE_ENV = "STUDIO_KEY_PASSPHRASE"
KEY_SCHEMA_VERSION = 1
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def _nacl() -> Any:
    try:
        import nacl.exceptions
        import nacl.pwhash
        import nacl.secret
        import nacl.signing
        import nacl.utils
    except ImportError as exc:  # pragma: no cover - the agent/core extras pull it
        raise DependencyMissing.for_module("pynacl", "agent", "signing") from exc
    return nacl


def default_keys_dir() -> Path:
    return config_dir() / "keys"


def key_id(public_key: bytes) -> str:
    """Short, stable fingerprint of a public key (first 16 hex digits of its SHA-256)."""
    return hashlib.sha256(public_key).hexdigest()[:16]


def encode_public(public_key: bytes) -> str:
    return base64.b64encode(public_key).decode("ascii")


def public_key_line(public_key: bytes, name: str) -> str:
    return f"ed25519 {encode_public(public_key)} {name}"


@dataclass
class KeyInfo:
    name: str
    key_id: str
    public_key: str  # base64
    created: str
    private_path: str | None
    public_path: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def get_passphrase(*, confirm: bool = False, prompt: str = "Key passphrase: ") -> str:
    """From STUDIO_KEY_PASSPHRASE, else prompted (never echoed); refuses when neither is possible."""
    env = os.environ.get(PASSPHRASE_ENV)
    if env is not None:
        return env
    if not sys.stdin or not sys.stdin.isatty():
        raise InputError("no key passphrase: STUDIO_KEY_PASSPHRASE is not set and there is no terminal to ask",
                         offending=PASSPHRASE_ENV, hint=f"export {PASSPHRASE_ENV}=... for non-interactive use")
    pw = getpass.getpass(prompt)
    if confirm and getpass.getpass("Repeat passphrase: ") != pw:
        raise InputError("the two passphrases differ", hint="run the command again")
    return pw


def _write_private(path: Path, data: bytes) -> None:
    """Create the file with mode 0600 from the start (no window where it is world-readable), then rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class KeyStore:
    """A folder of ``NAME.key`` / ``NAME.pub`` pairs (default: the config dir's ``keys/``)."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root else default_keys_dir()

    def _ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)

    def private_path(self, name: str) -> Path:
        return self.root / f"{name}.key"

    def public_path(self, name: str) -> Path:
        return self.root / f"{name}.pub"

    def generate(self, name: str, passphrase: str, *, overwrite: bool = False) -> KeyInfo:
        nacl = _nacl()
        if not _NAME_RE.match(name):
            raise InputError(f"invalid key name '{name}'", offending=name,
                             hint="use letters, digits, '.', '_' or '-' (at most 64)")
        if not passphrase:
            raise InputError("an empty passphrase would leave the private key unprotected",
                             offending=PASSPHRASE_ENV, hint="choose a passphrase")
        self._ensure()
        if self.private_path(name).exists() and not overwrite:
            raise InputError(f"a key named '{name}' already exists", offending=str(self.private_path(name)),
                             hint="choose another name (or delete the old files if you really mean to)")
        sk = nacl.signing.SigningKey.generate()
        pub = bytes(sk.verify_key)
        salt = nacl.utils.random(nacl.pwhash.argon2id.SALTBYTES)
        ops, mem = nacl.pwhash.argon2id.OPSLIMIT_INTERACTIVE, nacl.pwhash.argon2id.MEMLIMIT_INTERACTIVE
        kek = nacl.pwhash.argon2id.kdf(nacl.secret.SecretBox.KEY_SIZE, passphrase.encode("utf-8"), salt,
                                       opslimit=ops, memlimit=mem)
        box = nacl.secret.SecretBox(kek)
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        doc = {"schema_version": KEY_SCHEMA_VERSION, "type": "studio-ed25519-private-key", "name": name,
               "public_key": encode_public(pub), "key_id": key_id(pub), "created": created,
               "kdf": {"name": "argon2id", "opslimit": ops, "memlimit": mem,
                       "salt": base64.b64encode(salt).decode()},
               "cipher": "xsalsa20-poly1305",
               "ciphertext": base64.b64encode(bytes(box.encrypt(bytes(sk)))).decode()}
        _write_private(self.private_path(name), json.dumps(doc, indent=2).encode())
        self.public_path(name).write_text(public_key_line(pub, name) + "\n", encoding="utf-8")
        return self.info(name)

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted({p.stem for p in self.root.glob("*.key")} | {p.stem for p in self.root.glob("*.pub")})

    def info(self, name: str) -> KeyInfo:
        priv, pub_file = self.private_path(name), self.public_path(name)
        if priv.is_file():
            doc = _read_key_doc(priv)
            pub = base64.b64decode(doc["public_key"])
            created = doc.get("created", "")
        elif pub_file.is_file():
            pub = parse_public_keys(pub_file.read_text(encoding="utf-8"), str(pub_file))[0]
            created = ""
        else:
            raise InputError(f"no key named '{name}' in {self.root}", offending=name,
                             hint="list keys with `studio keys list`, create one with `studio keys generate NAME`")
        return KeyInfo(name=name, key_id=key_id(pub), public_key=encode_public(pub), created=created,
                       private_path=str(priv) if priv.is_file() else None, public_path=str(pub_file))

    def list(self) -> list[KeyInfo]:
        return [self.info(n) for n in self.names()]

    def export_public(self, name: str) -> str:
        info = self.info(name)
        return public_key_line(base64.b64decode(info.public_key), name)

    def resolve_private(self, key: str | Path) -> Path:
        """KEY may be a name in this store or a path to a ``.key`` file."""
        p = Path(key)
        if p.suffix == ".key" and p.is_file():
            return p
        if self.private_path(str(key)).is_file():
            return self.private_path(str(key))
        raise InputError(f"no private key '{key}'", offending=str(key),
                         hint=f"keys in {self.root}: {', '.join(self.names()) or 'none'}; "
                              "create one with `studio keys generate NAME`")

    def load_signing_key(self, key: str | Path, passphrase: str | None = None) -> Any:
        """Decrypt and return a nacl SigningKey; a wrong passphrase raises InputError, never a traceback."""
        return load_signing_key_file(self.resolve_private(key), passphrase)


def _read_key_doc(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("type") != "studio-ed25519-private-key":
            raise ValueError("not a studio private key")
        return doc
    except (OSError, ValueError) as exc:
        raise InputError(f"{path} is not a studio private key file: {exc}", offending=str(path),
                         hint="keys are created by `studio keys generate`") from exc


def load_signing_key_file(path: Path, passphrase: str | None = None) -> Any:
    nacl = _nacl()
    doc = _read_key_doc(path)
    if passphrase is None:
        passphrase = get_passphrase(prompt=f"Passphrase for {path.stem}: ")
    kdf = doc["kdf"]
    kek = nacl.pwhash.argon2id.kdf(nacl.secret.SecretBox.KEY_SIZE, passphrase.encode("utf-8"),
                                   base64.b64decode(kdf["salt"]), opslimit=int(kdf["opslimit"]),
                                   memlimit=int(kdf["memlimit"]))
    try:
        seed = nacl.secret.SecretBox(kek).decrypt(base64.b64decode(doc["ciphertext"]))
    except nacl.exceptions.CryptoError:
        raise InputError(f"wrong passphrase for key '{doc.get('name', path.stem)}'", offending=str(path),
                         hint=f"check {PASSPHRASE_ENV} or the passphrase you typed") from None
    sk = nacl.signing.SigningKey(seed)
    if encode_public(bytes(sk.verify_key)) != doc["public_key"]:
        raise InputError(f"key file {path} is inconsistent (public key does not match)", offending=str(path),
                         hint="the file was edited; use another key")
    return sk


# -- trusted public keys --------------------------------------------------------------------------------

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
        nacl = _nacl()
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

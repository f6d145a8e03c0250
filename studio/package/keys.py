"""Ed25519 signing keys: private keys encrypted at rest (Argon2id -> SecretBox), public keys as one-line files.

Private key file ``NAME.key`` (JSON, mode 0600) holds only the encrypted seed; the passphrase comes from
``STUDIO_KEY_PASSPHRASE`` or a prompt. Nothing here ever prints, logs or returns the seed as text.
Public key file ``NAME.pub`` is one line ``ed25519 <base64> NAME`` (several such lines make a trust file);
reading such lines, key ids and checking signatures are ``studio.edge.trust`` (the agent needs them too).
"""

from __future__ import annotations

import base64
import getpass
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_, _
from studio.core.errors import InputError
from studio.core.paths import config_dir
from studio.edge.trust import encode_public, key_id, load_nacl, parse_public_keys, public_key_line

PASSPHRASE_ENV = "STUDIO_KEY_PASSPHRASE"
KEY_SCHEMA_VERSION = 1
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def default_keys_dir() -> Path:
    return config_dir() / "keys"


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


def get_passphrase(*, confirm: bool = False, prompt: str = N_("Key passphrase: ")) -> str:
    """From STUDIO_KEY_PASSPHRASE, else prompted (never echoed); refuses when neither is possible."""
    env = os.environ.get(PASSPHRASE_ENV)
    if env is not None:
        return env
    if not sys.stdin or not sys.stdin.isatty():
        raise InputError("no key passphrase: STUDIO_KEY_PASSPHRASE is not set and there is no terminal to ask",
                         offending=PASSPHRASE_ENV, hint=f"export {PASSPHRASE_ENV}=... for non-interactive use")
    pw = getpass.getpass(_(prompt))  # the prompt's template (N_ at the caller) in the user's language
    if confirm and getpass.getpass(_("Repeat passphrase: ")) != pw:
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
        nacl = load_nacl()
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
    nacl = load_nacl()
    doc = _read_key_doc(path)
    if passphrase is None:
        stem = path.stem
        passphrase = get_passphrase(prompt=N_(f"Passphrase for {stem}: "))
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

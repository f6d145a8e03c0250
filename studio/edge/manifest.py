"""The bundle manifest: what the signature covers (every file's path, size and SHA-256, plus identity).

``manifest.json`` is stored as its canonical bytes (sorted keys, no spaces, ASCII), and the Ed25519
signature in ``manifest.sig`` is over exactly those bytes, prefixed by a domain tag. Verifiers check the
signature over the raw bytes before parsing them, so no canonicalisation ambiguity can be exploited.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from studio.core.errors import BundleError

MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.sig"
RESERVED = (MANIFEST_NAME, SIGNATURE_NAME)
SCHEMA_VERSION = 1
BUNDLE_KIND = "studio-edge-bundle"
SIGNING_DOMAIN = b"studio-edge-bundle/v1\n"
HASH_CHUNK = 1 << 20
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class FileEntry:
    path: str
    size: int
    sha256: str


@dataclass
class Manifest:
    name: str
    version: str
    board: str
    target: str
    created: str
    signer_public_key: str  # base64 Ed25519
    signer_key_id: str
    files: list[FileEntry] = field(default_factory=list)
    runtime: str = "runtime.json"
    forced: bool = False
    tool: str = ""
    requires: dict[str, Any] = field(default_factory=dict)  # what a compiled module needs: rknn toolkit/platform
    schema_version: int = SCHEMA_VERSION
    kind: str = BUNDLE_KIND

    def canonical(self) -> bytes:
        return canonical_json(asdict(self))

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def file_map(self) -> dict[str, FileEntry]:
        return {f.path: f for f in self.files}

    @classmethod
    def parse(cls, raw: bytes) -> Manifest:
        def no_dupes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            keys = [k for k, _ in pairs]
            if len(keys) != len(set(keys)):
                raise ValueError("duplicate key")
            return dict(pairs)

        try:
            d = json.loads(raw.decode("ascii"), object_pairs_hook=no_dupes)
            if d.get("kind") != BUNDLE_KIND:
                raise ValueError(f"kind is {d.get('kind')!r}")
            if int(d.get("schema_version", 0)) > SCHEMA_VERSION:
                raise ValueError(f"schema_version {d['schema_version']} is newer than this studio")
            files = [FileEntry(path=str(f["path"]), size=int(f["size"]), sha256=str(f["sha256"]))
                     for f in d.pop("files")]
            known = {k: d[k] for k in cls.__dataclass_fields__ if k in d and k != "files"}
            m = cls(files=files, **known)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise BundleError(f"manifest is malformed: {exc}", offending=MANIFEST_NAME,
                              hint="rebuild the bundle with `studio package`") from None
        if not NAME_RE.match(m.name) or not NAME_RE.match(m.version):
            raise BundleError(f"manifest name/version {m.name!r}/{m.version!r} is not a safe identifier",
                              offending=MANIFEST_NAME, hint="names and versions use [A-Za-z0-9._-]")
        seen: set[str] = set()
        for f in m.files:
            check_member_name(f.path)
            if f.path in seen or f.path in RESERVED:
                raise BundleError(f"manifest lists {f.path} twice or lists a reserved name",
                                  offending=f.path, hint="rebuild the bundle")
            seen.add(f.path)
        return m


def canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def signature_doc(public_key: bytes, signature: bytes, key_id: str) -> bytes:
    return canonical_json({"algorithm": "ed25519", "key_id": key_id,
                           "public_key": base64.b64encode(public_key).decode(),
                           "signature": base64.b64encode(signature).decode()})


def parse_signature(raw: bytes) -> tuple[bytes, bytes]:
    """(public key, signature) from ``manifest.sig``."""
    try:
        d = json.loads(raw.decode("ascii"))
        if d.get("algorithm") != "ed25519":
            raise ValueError(f"algorithm {d.get('algorithm')!r}")
        pub, sig = base64.b64decode(d["public_key"], validate=True), base64.b64decode(d["signature"], validate=True)
        if len(pub) != 32 or len(sig) != 64:
            raise ValueError("wrong key or signature length")
        return pub, sig
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise BundleError(f"signature file is malformed: {exc}", offending=SIGNATURE_NAME,
                          hint="rebuild the bundle with `studio package`") from None


def check_member_name(name: str) -> str:
    """Refuse absolute paths, '..', empty or odd components: a bundle member must stay inside its folder."""
    bad = (not name or name.startswith(("/", "\\")) or "\\" in name or "\x00" in name or len(name) > 512
           or re.match(r"^[A-Za-z]:", name) is not None)
    parts = name.split("/")
    if not bad:
        bad = any(p in ("", ".", "..") for p in parts)
    if bad:
        raise BundleError(f"unsafe path in bundle: {name!r}", offending=name,
                          hint="bundle members must be relative paths without '..' (rebuild with `studio package`)")
    return name


def sha256_file(path: Any, buf_size: int = HASH_CHUNK) -> tuple[str, int]:
    """Streaming SHA-256 (never reads the whole file into memory): (hex digest, size)."""
    h = hashlib.sha256()
    buf = bytearray(buf_size)
    view = memoryview(buf)
    size = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            h.update(view[:n])
            size += n
    return h.hexdigest(), size

"""Offline verification of signed edge bundles, as a tar file or as an extracted folder.

The same checks guard all three load paths (seed section 4.4):

* the edge agent's ONNX Runtime loader calls :func:`verify_directory` on a version folder before it
  creates an InferenceSession (and :func:`extract_verified` when a bundle is uploaded);
* a Triton Python-backend ``model.py`` calls :func:`verify_directory` in ``initialize`` and raises when it
  fails, so Triton refuses to load the model::

      from studio.edge.verify import verify_directory, load_trusted_keys
      def initialize(self, args):
          verify_directory(Path(__file__).parent, load_trusted_keys(os.environ["STUDIO_TRUST"]),
                           allow_extra=["model.py", "config.pbtxt", "__pycache__/*"])

* the compiled-artifact path (``studio compile`` output packed into a bundle) calls the same function on the
  artifact folder before loading the library.

Every check raises :class:`studio.core.errors.BundleError` naming the offending member with a hint.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.catalogue import _, tr
from studio.core.errors import BundleError, InputError
from studio.core.jobs import JobState
from studio.core.reports import Report
from studio.edge.manifest import (
    HASH_CHUNK,
    MANIFEST_NAME,
    RESERVED,
    SIGNATURE_NAME,
    SIGNING_DOMAIN,
    Manifest,
    check_member_name,
    parse_signature,
    sha256_file,
)
from studio.edge.trust import TrustedKeys, encode_public, load_trusted_keys

MAX_MEMBERS = 10_000
MAX_MANIFEST_BYTES = 16 << 20

__all__ = ["VerifyReport", "verify_bundle", "extract_verified", "verify_directory", "load_trusted_keys"]


@dataclass
class VerifyReport(Report):
    bundle: str
    name: str
    version: str
    board: str
    target: str
    signer_key_id: str
    created: str
    files: int
    total_bytes: int
    seconds: float
    forced: bool = False
    ok: bool = True
    openssf: dict[str, Any] | None = None  # the OpenSSF signature of model/ (studio.edge.openssf.check_bundle)
    schema_version: int = 1

    def render(self) -> str:
        text = "OK  " + tr("{bundle}: {name} {version} for {board} (target {target}), {files} files, {mb} MB, signed "
                           "by {key}, verified in {seconds} s", bundle=self.bundle, name=self.name,
                           version=self.version, board=self.board, target=self.target, files=self.files,
                           mb=f"{self.total_bytes / 1e6:.1f}", key=self.signer_key_id, seconds=f"{self.seconds:.2f}")
        text += "  " + _("[packaged with --force]") if self.forced else ""
        o = self.openssf or {}
        if o.get("ok"):
            text += "\nOK  " + tr("OpenSSF signature {signature}: model/ ({files} files) signed by {signer} (trusted: "
                                  "{trusted}; {tool})", signature=o.get("signature"), files=o.get("files"),
                                  signer=o.get("signer"), trusted=o.get("trusted_by"), tool=o.get("tool"))
        elif o:
            text += "\n    " + tr("OpenSSF signature {signature} by {signer}: NOT checked ({note})",
                                  signature=o.get("signature"), signer=o.get("signer"), note=o.get("note"))
        return text


def _check_signature(manifest_raw: bytes | None, sig_raw: bytes | None, trusted: TrustedKeys) -> Manifest:
    if manifest_raw is None:
        raise BundleError("bundle has no manifest.json", offending=MANIFEST_NAME,
                          hint="this is not a studio bundle, or it was truncated")
    if sig_raw is None:
        raise BundleError("bundle has no manifest.sig (unsigned)", offending=SIGNATURE_NAME,
                          hint="sign it: build it with `studio package --key KEY`")
    pub, sig = parse_signature(sig_raw)
    trusted.verify(pub, SIGNING_DOMAIN + manifest_raw, sig)
    manifest = Manifest.parse(manifest_raw)
    if manifest.signer_public_key != encode_public(pub):
        raise BundleError("manifest names a different signer than the signature", offending=MANIFEST_NAME,
                          hint="rebuild the bundle with `studio package`")
    return manifest


def _compare(manifest: Manifest, seen: dict[str, tuple[str, int]]) -> None:
    expected = manifest.file_map()
    for path in expected:
        if path not in seen:
            raise BundleError(f"file listed in the manifest is missing: {path}", offending=path,
                              hint="the bundle is incomplete; rebuild or re-download it")
    for path, (digest, size) in seen.items():
        entry = expected.get(path)
        if entry is None:
            raise BundleError(f"file not listed in the signed manifest: {path}", offending=path,
                              hint="someone added a file after signing; do not use this bundle")
        if size != entry.size or digest != entry.sha256:
            raise BundleError(f"SHA-256 of {path} does not match the signed manifest (file was modified)",
                              offending=path, hint="do not use this bundle; rebuild it from the source model")


def _open_tar(path: Path) -> tarfile.TarFile:
    if not path.is_file():
        raise InputError(f"bundle {path} does not exist", offending=str(path), hint="check the path")
    try:
        return tarfile.open(path, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise BundleError(f"{path} is not a readable tar bundle: {exc}", offending=str(path),
                          hint="build bundles with `studio package`") from None


def _scan(path: Path, trusted: TrustedKeys, dest: Path | None, job: JobState | None) -> tuple[Manifest, float]:
    t0 = time.perf_counter()
    total = max(path.stat().st_size, 1)
    done = 0
    seen: dict[str, tuple[str, int]] = {}
    dirs: set[str] = set()
    manifest_raw = sig_raw = None
    buf = bytearray(HASH_CHUNK)
    view = memoryview(buf)
    with _open_tar(path) as tf:
        count = 0
        while True:
            try:
                m = tf.next()
            except tarfile.TarError as exc:
                raise BundleError(f"corrupt tar data in {path.name}: {exc}", offending=str(path),
                                  hint="the upload was truncated or altered") from None
            if m is None:
                break
            count += 1
            if count > MAX_MEMBERS:
                raise BundleError(f"bundle has more than {MAX_MEMBERS} entries", offending=str(path),
                                  hint="pack fewer files")
            name = m.name
            if m.isdir():
                dirs.add(check_member_name(name.rstrip("/")))
                continue
            if m.issym() or m.islnk():
                raise BundleError(f"bundle contains a link entry: {name} -> {m.linkname}", offending=name,
                                  hint="bundles may hold regular files only")
            if not m.isreg():
                raise BundleError(f"bundle contains a device, fifo or special entry: {name}", offending=name,
                                  hint="bundles may hold regular files only")
            check_member_name(name)
            if name in seen or (name == MANIFEST_NAME and manifest_raw is not None) or (
                    name == SIGNATURE_NAME and sig_raw is not None):
                raise BundleError(f"bundle contains {name} twice", offending=name,
                                  hint="a duplicate entry could shadow the verified one; rebuild the bundle")
            src = tf.extractfile(m)
            assert src is not None
            if name in RESERVED:
                if m.size > MAX_MANIFEST_BYTES:
                    raise BundleError(f"{name} is implausibly large ({m.size} bytes)", offending=name,
                                      hint="rebuild the bundle")
                raw = src.read()
                if name == MANIFEST_NAME:
                    manifest_raw = raw
                else:
                    sig_raw = raw
                if dest is not None:
                    _write_bytes(dest, name, raw)
                continue
            h = hashlib.sha256()
            size = 0
            out = _write_new(dest, name) if dest is not None else None
            try:
                while True:
                    n = src.readinto(buf)
                    if not n:
                        break
                    chunk = view[:n]
                    h.update(chunk)
                    if out is not None:
                        out.write(chunk)
                    size += n
                    done += n
                    if job is not None:
                        job.set_progress(100.0 * done / total)
                        if job.cancel_requested:
                            job.check_cancelled()
            finally:
                if out is not None:
                    out.close()
            seen[name] = (h.hexdigest(), size)
    manifest = _check_signature(manifest_raw, sig_raw, trusted)
    _compare(manifest, seen)
    return manifest, time.perf_counter() - t0


def _write_new(dest: Path, name: str) -> Any:
    """Open dest/name for writing: new file only, never through a link (names are already checked)."""
    target = dest / name
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    return os.fdopen(fd, "wb", buffering=0)


def _write_bytes(dest: Path, name: str, raw: bytes) -> None:
    with _write_new(dest, name) as f:
        f.write(raw)


def verify_bundle(bundle: Path | str, trusted: TrustedKeys | Any, job: JobState | None = None) -> VerifyReport:
    """Check a bundle tar offline: trusted signer, intact manifest, every file's size and SHA-256, no extras."""
    bundle = Path(bundle)
    trusted = trusted if isinstance(trusted, TrustedKeys) else load_trusted_keys(trusted)
    if job is not None:
        job.set_status(f"verifying {bundle.name}")
    manifest, secs = _scan(bundle, trusted, None, job)
    return _report(bundle, manifest, secs)


def _report(bundle: Path, m: Manifest, secs: float) -> VerifyReport:
    return VerifyReport(bundle=str(bundle), name=m.name, version=m.version, board=m.board, target=m.target,
                        signer_key_id=m.signer_key_id, created=m.created, files=len(m.files),
                        total_bytes=m.total_size, seconds=round(secs, 4), forced=m.forced)


def extract_verified(bundle: Path | str, dest: Path | str, trusted: TrustedKeys,
                     job: JobState | None = None) -> Manifest:
    """Extract into the NEW folder ``dest`` while hashing, then verify; on any failure ``dest`` is removed.

    One pass over the data (the agent uses this on uploads before anything is activated).
    """
    import shutil

    bundle, dest = Path(bundle), Path(dest)
    dest.mkdir(parents=True, exist_ok=False)
    try:
        manifest, _files = _scan(bundle, trusted, dest, job)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return manifest


def _matches(rel: str, patterns: list[str] | tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatch(rel, p) for p in patterns)


def verify_directory(directory: Path | str, trusted: TrustedKeys | Any,
                     allow_extra: list[str] | tuple[str, ...] = ()) -> Manifest:
    """Verify an extracted bundle folder before loading anything from it; returns the verified manifest.

    Checks the signature of ``manifest.json`` against ``trusted`` (a TrustedKeys, a key/trust file path, or a
    folder of ``.pub`` files), then every listed file's size and SHA-256; refuses symlinks, missing files and
    files not in the manifest unless they match an ``allow_extra`` glob (relative POSIX paths, e.g.
    ``"model.py"``, ``"__pycache__/*"``). Raises BundleError on any mismatch.
    """
    root = Path(directory)
    trusted = trusted if isinstance(trusted, TrustedKeys) else load_trusted_keys(trusted)

    def read_small(name: str) -> bytes | None:
        p = root / name
        if not p.exists():
            return None
        if p.is_symlink() or not p.is_file():
            raise BundleError(f"{name} is not a regular file", offending=str(p), hint="reinstall the bundle")
        return p.read_bytes()

    manifest = _check_signature(read_small(MANIFEST_NAME), read_small(SIGNATURE_NAME), trusted)
    seen: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            st = p.lstat()
            if stat.S_ISDIR(st.st_mode):
                continue
            if rel in RESERVED or (rel not in manifest.file_map() and _matches(rel, allow_extra)):
                continue  # allow_extra tolerates unlisted files; a listed one is always checked
            if not stat.S_ISREG(st.st_mode):
                raise BundleError(f"{rel} is a link or special file", offending=str(p),
                                  hint="bundle folders hold regular files only; reinstall the bundle")
            if rel not in manifest.file_map():
                raise BundleError(f"file not listed in the signed manifest: {rel}", offending=str(p),
                                  hint="remove it, or reinstall the bundle")
            seen[rel] = sha256_file(p)
    _compare(manifest, seen)
    return manifest

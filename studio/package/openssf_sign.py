"""OpenSSF signatures around a bundle: the one a source folder arrives with (checked before packaging) and the
one `studio package --openssf-key` writes over the bundle's ``model/`` folder (``model.sig`` at the bundle's
root, listed in the Ed25519 manifest like every other file).

The packed files are signed as the bundle will hold them: hard links (symbolic ones across file systems) under
a staging ``model/`` folder beside the output, so files the board's runtime does not use (left out by
studio.package.contents) are not in the signature either, and nothing is copied.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio.edge.openssf import (
    SIGNATURE_FILE,
    OpenSSFTrust,
    find_signature,
    read_signature,
    sign_folder,
    verify_folder,
)

MODEL_PREFIX = "model/"
PASSWORD_ENV = "STUDIO_OPENSSF_KEY_PASSWORD"


def check_arriving(source: Path, trust: OpenSSFTrust | None) -> tuple[dict[str, Any], str | None]:
    """Verify the signature a source folder arrived with: (the check as a dict, or {}; a warning or None).

    A signature with nothing to check it against is a warning naming its signer; one that does not match
    (a changed file, another key) raises BundleError, so nothing is packaged."""
    if not source.is_dir():
        if trust:
            raise InputError(f"--openssf-trust checks a signed model folder; {source} is a file", offending=str(source),
                             hint="package the folder the signature covers")
        return {}, None
    sig = find_signature(source)
    if sig is None:
        if trust:
            raise InputError(f"{source} arrived with no OpenSSF signature ({source / SIGNATURE_FILE} or "
                             f"{source.parent / (source.name + '.sig')}), and --openssf-trust asks to check one",
                             offending=str(source), hint="get the signature from the model's publisher, or drop "
                                                         "--openssf-trust")
        return {}, None
    if not trust:
        info = read_signature(sig)
        return {}, (f"{source} arrived with an OpenSSF signature ({sig.name}, signed by {info.signer()}) that was "
                    "NOT checked: pass --openssf-trust with the publisher's public key (or CA / Sigstore identity)")
    return verify_folder(source, trust, sig).to_dict(), None


def _stage(files: dict[str, Path], root: Path) -> bool:
    """Link the packed model files under ``root``; True when they had to be symbolic links."""
    model = [(rel.removeprefix(MODEL_PREFIX), src) for rel, src in sorted(files.items()) if rel.startswith(MODEL_PREFIX)]
    for symbolic in (False, True):
        shutil.rmtree(root, ignore_errors=True)
        try:
            for rel, src in model:
                dst = root / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                if symbolic:
                    dst.symlink_to(Path(src).resolve())
                else:
                    os.link(src, dst)
            return symbolic
        except OSError:
            if symbolic:
                raise
    return True


def sign_model_files(files: dict[str, Path], private_key: Path, workdir: Path) -> tuple[bytes, dict[str, Any]]:
    """The OpenSSF signature (Sigstore bundle bytes) of the bundle's ``model/`` files, and what to report."""
    if not any(rel.startswith(MODEL_PREFIX) for rel in files):
        raise InputError("--openssf-key signs the bundle's model/ folder, and this bundle has none (a compiled "
                         "module only)", offending="--openssf-key",
                         hint="package the ONNX model with --compiled DIR, so model/ holds it")
    if not Path(private_key).is_file():
        raise InputError(f"OpenSSF signing key {private_key} does not exist", offending=str(private_key),
                         hint="create one: openssl ecparam -name prime256v1 -genkey -noout -out key.pem "
                              "(and its public half: openssl ec -in key.pem -pubout -out key.pub)")
    workdir.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".openssf-stage-", dir=workdir))
    try:
        symbolic = _stage(files, stage / "model")
        info = sign_folder(stage / "model", private_key, stage / SIGNATURE_FILE,
                           password=os.environ.get(PASSWORD_ENV) or None, allow_symlinks=symbolic)
        data = (stage / SIGNATURE_FILE).read_bytes()
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return data, {"file": SIGNATURE_FILE, "method": info.method, "signer": info.signer(),
                  "key_sha256": info.key_hint, "files": len(info.files), "covers": "model/"}

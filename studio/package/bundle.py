"""Build a signed edge bundle (one tar) for a board from an ONNX file or an export folder.

Layout inside the tar (uncompressed: model weights do not compress, and plain tar streams at disk speed)::

    runtime.json            served model names, ONNX files, runtime + execution providers for the board
    compat-report.json      the inspector's report for the board's target
    model/...               the ONNX model(s), external data, tokenizer / processor / config files: only what
                            the board's runtime uses (studio/package/contents.py); compiled modules, native
                            code and other runtimes' models found in the folder are left out, with a note
    compiled/...            a `studio compile` module (library, params.bin, compiled.json, compile_report.json),
                            served with runtime "tvm"; or a `--backend rknn` one (model.rknn, its source
                            model.onnx, compiled.json), runtime "rknn" (see studio/package/compiled.py)
    manifest.json           canonical JSON: identity + every file's path, size, SHA-256 (signed)
    manifest.sig            Ed25519 signature over the manifest bytes

Each payload file is hashed from the very bytes written into the tar (one read per file, in 1 MiB chunks),
so the signed digests always describe what the bundle holds, even if the source changes meanwhile.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio import __version__
from studio.core.atomic import atomic_path
from studio.core.errors import BundleError, InputError, TargetError
from studio.core.jobs import JobState
from studio.edge.manifest import (
    HASH_CHUNK,
    MANIFEST_NAME,
    NAME_RE,
    SIGNATURE_NAME,
    SIGNING_DOMAIN,
    FileEntry,
    Manifest,
    sha256_file,
    signature_doc,
)
from studio.edge.raw_inputs import declare_raw_inputs
from studio.edge.tensors import onnx_elem_to_kserve
from studio.edge.trust import encode_public, key_id
from studio.package.boards import BoardProfile, load_board
from studio.package.keys import KeyStore
from studio.package.package_report import PackageReport

RUNTIME_NAME = "runtime.json"
COMPAT_NAME = "compat-report.json"
SKIP_DIRS = {"__pycache__", ".git", ".ipynb_checkpoints"}
VERDICT_ORDER = {"pass": 0, "unknown": 1, "risky": 2, "fail": 3}
# Files next to a lone .onnx that belong with it (tokenizer / processor / model config).
COMPANION_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model",
                   "spiece.model", "sentencepiece.bpe.model", "preprocessor_config.json", "processor_config.json",
                   "added_tokens.json", "chat_template.json", "export-report.json",
                   "generation.json", "genai_config.json")  # a KV-cache export (studio.generate): the agent generates


@dataclass
class _Source:
    files: dict[str, Path]  # bundle path -> source file
    onnx: list[str]  # bundle paths of ONNX models, primary first
    stem: str


def _external_data(onnx_path: Path) -> list[Path]:
    """Files an ONNX model references as external data (read without loading the weights); a missing or truncated
    one is a ModelError naming it (studio.core.external_data): a bundle never goes out without its weights."""
    from studio.core.external_data import check_model_files

    return [d.path for d in check_model_files(onnx_path)]


def _walk(src: Path) -> dict[str, Path]:
    """{"model/<relative path>": file} of every regular file under ``src`` (hidden files and caches skipped)."""
    files: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for fn in sorted(filenames):
            if fn.startswith(".") or fn.endswith(".pyc"):
                continue
            p = Path(dirpath) / fn
            if p.is_file():  # not dangling links, sockets...
                files[f"model/{p.relative_to(src).as_posix()}"] = p
    return files


def lone_compiled_module(src: Path) -> Path | None:
    """The one compile output folder inside a folder that holds no ONNX model (None when there is an ONNX
    model or no compiled module); InputError when there are several to choose from."""
    from studio.package.contents import compiled_dirs_in

    if not src.is_dir():
        return None
    files = _walk(src)
    cdirs = compiled_dirs_in(files)
    if not cdirs or any(k.endswith(".onnx") for k in files):
        return None
    if len(cdirs) > 1:
        raise InputError(f"{src} holds no ONNX model but {len(cdirs)} compiled modules", offending=str(src),
                         hint="package one of them: " + ", ".join(sorted(str(d) for d in cdirs.values())))
    return next(iter(cdirs.values()))


def collect_source(src: Path) -> _Source:
    """Which files go into the bundle (under ``model/``) for an ONNX file or an export folder."""
    src = Path(src)
    if not src.exists():
        raise InputError(f"{src} does not exist", offending=str(src),
                         hint="pass an .onnx file or the folder `studio export` wrote")
    files: dict[str, Path] = {}
    if src.is_file():
        if src.suffix != ".onnx":
            raise InputError(f"{src} is not an ONNX file", offending=str(src),
                             hint="export the model first with `studio export`")
        files[f"model/{src.name}"] = src
        for extra in _external_data(src):
            files[f"model/{extra.relative_to(src.parent).as_posix()}"] = extra
        for name in COMPANION_FILES:
            if (src.parent / name).is_file():
                files[f"model/{name}"] = src.parent / name
        onnx_files = [f"model/{src.name}"]
        stem = src.parent.name if src.stem == "model" else src.stem  # an export's model.onnx: its folder's name
    else:
        files = _walk(src)
        onnx_files = sorted(k for k in files if k.endswith(".onnx"))
        if not onnx_files:
            from studio.package.contents import compiled_dirs_in

            cdirs = sorted(str(d) for d in compiled_dirs_in(files).values())
            raise InputError(f"no .onnx model in {src}", offending=str(src),
                             hint=f"it holds compiled modules: package one of them ({', '.join(cdirs)})" if cdirs
                             else "export the model first with `studio export`")
        primary = next((k for k in onnx_files if k == "model/model.onnx"), None)
        if primary is None:
            primary = next((k for k in onnx_files if "/" not in k.removeprefix("model/")), onnx_files[0])
        onnx_files = [primary] + [k for k in onnx_files if k != primary]
        # the model file's stem, except the generic "model.onnx" of an export folder: then the folder's name
        stem = src.name if primary == "model/model.onnx" else Path(primary).stem
    return _Source(files=files, onnx=onnx_files, stem=stem)


def _io_of(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    import onnx

    try:
        g = onnx.load(str(path), load_external_data=False).graph
    except Exception:
        return [], []
    inits = {i.name for i in g.initializer}

    def desc(v: Any) -> dict[str, Any]:
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else -1 for d in t.shape.dim]
        return {"name": v.name, "datatype": onnx_elem_to_kserve(t.elem_type), "shape": shape}

    return [desc(v) for v in g.input if v.name not in inits], [desc(v) for v in g.output]


def _generation_of(onnx_rel: str, files: dict[str, Path]) -> dict[str, Any]:
    """The generation record of a packed decoder exported with its KV cache (generation.json beside it naming
    this file), as runtime.json carries it; {} for any other model."""
    folder = onnx_rel.rsplit("/", 1)[0]
    path = files.get(f"{folder}/generation.json")
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, ValueError):
        return {}
    main = raw.get("model_file") or raw.get("decoder_file") if isinstance(raw, dict) else None  # Whisper: decoder_file
    if main != onnx_rel.rsplit("/", 1)[1]:
        return {}
    named = {**(raw.get("parts") or {}), "encoder": raw.get("encoder_file")}  # VLM: parts.vision; Whisper: encoder
    parts = {k: f"{folder}/{v}" for k, v in named.items() if isinstance(v, str) and v != main
             and f"{folder}/{v}" in files}
    out = {"config": f"{folder}/generation.json", "kind": str(raw.get("kind") or "decoder-only"),
           "model_type": raw.get("model_type"), "max_context": raw.get("max_context")}
    return {**out, "parts": parts} if parts else out


def served_names(name: str, onnx_files: list[str]) -> dict[str, str]:
    """Primary model under the bundle's name; other parts (per-modality encoders) as NAME.<stem>."""
    out = {onnx_files[0]: name}
    for p in onnx_files[1:]:
        stem = Path(p).stem.replace("/", ".")
        out[p] = f"{name}.{stem}"
    return out


def run_inspector(onnx_paths: dict[str, Path], target: str) -> tuple[str, dict[str, Any]]:
    """Worst verdict over the bundle's models for ``target`` and the per-model reports.

    Uses studio.inspect.api.inspect_model; if the inspector is not installed the verdict is "unknown".
    """
    try:
        from studio.inspect.api import inspect_model
    except ImportError as exc:
        return "unknown", {"note": f"inspector not available ({exc}); compatibility not checked"}
    reports: dict[str, Any] = {}
    worst = "pass"
    for rel, path in onnx_paths.items():
        rep = inspect_model(path, targets=[target])
        tr = rep.targets.get(target) if hasattr(rep, "targets") else None
        verdict = str(getattr(tr, "verdict", "unknown") if tr is not None else "unknown")
        reports[rel] = {"verdict": verdict, "report": rep.to_dict()}
        if VERDICT_ORDER.get(verdict, 1) > VERDICT_ORDER[worst]:
            worst = verdict
    return worst, reports


def _tarinfo(name: str, size: int, mtime: float) -> tarfile.TarInfo:
    ti = tarfile.TarInfo(name)
    ti.size, ti.mode, ti.mtime = size, 0o644, int(mtime)
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    return ti


class _HashingReader:
    """File wrapper that hashes every byte tarfile copies into the archive."""

    def __init__(self, f: Any, on_bytes: Any) -> None:
        self.f, self.h, self.size, self.on_bytes = f, hashlib.sha256(), 0, on_bytes

    def read(self, n: int = -1) -> bytes:
        data = self.f.read(n)
        self.h.update(data)
        self.size += len(data)
        self.on_bytes(len(data))
        return data


def check_name(value: str, what: str) -> str:
    if not NAME_RE.match(value):
        raise InputError(f"invalid bundle {what} '{value}'", offending=value,
                         hint="use letters, digits, '.', '_' or '-' (at most 64, starting with a letter or digit)")
    return value


def _select(src: _Source, source: Path, profile: BoardProfile, served_compiled: Path | None) -> list[Any]:
    """Drop from a folder source what the board's runtime cannot use (studio.package.contents); the notes."""
    if not src.onnx or not source.is_dir():
        return []  # a lone .onnx carries only its data and companions; a compiled folder only its module
    from studio.package.contents import select_for_board

    sel = select_for_board(src.files, src.onnx, profile, external={p: _external_data(src.files[p]) for p in src.onnx},
                           served_compiled=served_compiled)
    src.files = sel.files
    return sel.left_out


def build_bundle(source: Path | str, board: str | BoardProfile, signing_key: Any, out: Path | str, *,
                 name: str | None = None, version: str | None = None, force: bool = False,
                 job: JobState | None = None, keys_dir: Path | str | None = None,
                 passphrase: str | None = None, compiled: Path | str | None = None,
                 openssf_key: Path | str | None = None, openssf_trust: Any = None) -> PackageReport:
    """Package ``source`` for ``board`` into the signed tar ``out`` (written atomically).

    ``signing_key`` is a nacl SigningKey, or a key name / ``.key`` path decrypted with ``passphrase``
    (or STUDIO_KEY_PASSPHRASE / a prompt). Refuses when the inspector says the model fails the board's target,
    unless ``force``. ``source`` may be a `studio compile` folder (served with runtime "tvm"); ``compiled``
    adds such a folder to an ONNX source (the compiled module is served under the name, the ONNX model as
    NAME.onnx). A compiled module built for another CPU than the board's is refused unless ``force``.
    From a folder, only what the board's runtime uses is packed: compiled modules, native code, other
    runtimes' models and framework weights in it are left out, each named in ``left_out`` and the warnings
    (studio.package.contents); a folder holding no ONNX model but one compile output packs that module.
    A folder arriving with an OpenSSF signature is checked against ``openssf_trust`` (an edge.openssf.OpenSSFTrust;
    unchecked: a warning); ``openssf_key`` also signs the packed ``model/`` folder into ``model.sig``.
    """
    from studio.package import compiled as cp

    t0 = time.perf_counter()
    job = job or JobState(name="package")
    profile = board if isinstance(board, BoardProfile) else load_board(board)
    csrc = None
    nested: Path | None = None
    if compiled is not None:
        if not cp.is_compiled_dir(compiled):
            raise InputError(f"{compiled} is not a compiled artifact folder (no compiled.json)",
                             offending=str(compiled), hint="pass the --out folder of `studio compile`")
        csrc = cp.read_compiled(compiled)
        src = collect_source(Path(source))
    elif cp.is_compiled_dir(source):
        csrc = cp.read_compiled(source)
        src = _Source(files={}, onnx=[], stem=csrc.stem)
    elif (nested := lone_compiled_module(Path(source))) is not None:
        csrc = cp.read_compiled(nested)  # a folder holding only a compile output: that module is the model
        src = _Source(files={}, onnx=[], stem=csrc.stem)
    else:
        src = collect_source(Path(source))
    from studio.package.openssf_sign import check_arriving

    arriving, unchecked = check_arriving(Path(source), openssf_trust)  # before anything is written
    warnings: list[str] = [unchecked] if unchecked else []
    if nested is not None:
        warnings.append(f"{source} holds no ONNX model: packaged its compiled module {nested}")
    left_out = _select(src, Path(source), profile, Path(compiled) if compiled is not None else None)
    warnings.extend(lo.note() for lo in left_out)
    if csrc is not None:
        w = cp.check_arch(csrc, profile.id, profile.cpu_arch, force, board_npu=profile.target)
        if w:
            warnings.append(w)
    name = check_name(name or src.stem.replace(" ", "-"), "name")
    version = check_name(version or time.strftime("%Y%m%d.%H%M%S"), "version")
    out = Path(out)

    job.set_status(f"inspecting for {profile.id} (target {profile.target})")
    if src.onnx:
        verdict, reports = run_inspector({p: src.files[p] for p in src.onnx}, profile.target)
    else:
        assert csrc is not None
        verdict = cp.compat_verdict(csrc)
        reports = {f"{cp.COMPILED_PREFIX}/": {"verdict": verdict, "note": "compiled module: its parity against "
                                                                          "ONNX Runtime at compile time"}}
    arch_mismatch = bool(csrc is not None and csrc.arch and csrc.arch != (
        profile.target if csrc.library_kind == "rknn" else cp.norm_arch(profile.cpu_arch)))
    forced = bool(force and (verdict == "fail" or arch_mismatch))
    if verdict == "fail" and not force:
        failing = [p for p, r in reports.items() if isinstance(r, dict) and r.get("verdict") == "fail"]
        raise TargetError(f"the model fails the {profile.target} target of board {profile.id}",
                          offending=", ".join(failing) or str(source),
                          hint=f"run `studio inspect {source} --target {profile.target}` to see why; "
                               "fix the model, or package anyway with --force")
    job.check_cancelled()
    if not hasattr(signing_key, "verify_key"):
        signing_key = KeyStore(keys_dir).load_signing_key(signing_key, passphrase)
    pub = bytes(signing_key.verify_key)

    names = served_names(name, src.onnx) if src.onnx else {}
    if csrc is not None and src.onnx:  # the compiled module takes the name; the ONNX model stays reachable
        names[src.onnx[0]] = f"{name}.onnx"
    models = []
    compiled_info: dict[str, Any] = {}
    if csrc is not None:
        inputs, outputs = cp.io_specs(csrc)
        models.append({"name": name, "runtime": cp.runtime_name(csrc), "path": cp.COMPILED_PREFIX, "primary": True,
                       "inputs": inputs, "outputs": outputs})
        compiled_info = {**cp.runtime_config(csrc), "runtime": cp.runtime_name(csrc), "parity": csrc.parity_summary()}
    # graphs a generation model runs itself (vision tower, speech encoder): carried and signed, named in its
    # record's "parts", not served alone (zeros cannot warm them up, and their inputs come from the generation loop)
    gen_parts = {q for p in src.onnx for q in _generation_of(p, src.files).get("parts", {}).values()}
    for p in src.onnx:
        if p in gen_parts:
            continue
        inputs, outputs = _io_of(src.files[p])
        models.append({"name": names[p], "runtime": profile.runtime, "path": p,
                       "primary": csrc is None and p == src.onnx[0], "inputs": inputs, "outputs": outputs})
        raw_inputs = declare_raw_inputs(inputs, src.files[p].parent, p.rsplit("/", 1)[0])  # agent pipeline
        if raw_inputs:
            models[-1]["raw_inputs"] = raw_inputs
        generation = _generation_of(p, src.files)
        if generation:  # the agent serves it on /generate too (studio.agent.generation)
            models[-1]["generation"] = generation
    runtime = {"schema_version": 1, "runtime": cp.runtime_name(csrc) if csrc is not None else profile.runtime,
               "board": profile.id,
               "execution_providers": profile.execution_providers, "models": models}
    if csrc is not None:
        runtime[cp.runtime_name(csrc)] = cp.runtime_config(csrc)
        runtime["parity"] = csrc.parity_summary()
    compat = {"schema_version": 1, "board": profile.id, "target": profile.target, "verdict": verdict,
              "forced": forced, "models": reports, "left_out": [lo.to_dict() for lo in left_out]}
    if csrc is not None:
        compat["compiled"] = {"arch": csrc.arch, "arch_source": csrc.arch_source, "board_arch": profile.cpu_arch,
                              "target": csrc.meta.get("target"), "parity": csrc.parity_summary(),
                              "warnings": warnings}
        src.files.update(csrc.files)
    generated = {RUNTIME_NAME: json.dumps(runtime, indent=2).encode(),
                 COMPAT_NAME: json.dumps(compat, indent=2, default=str).encode()}
    openssf: dict[str, Any] = {}
    if openssf_key is not None:
        from studio.package.openssf_sign import SIGNATURE_FILE, sign_model_files

        job.set_status("signing model/ (OpenSSF)")
        generated[SIGNATURE_FILE], openssf = sign_model_files(src.files, Path(openssf_key), out.parent)
    total = sum(p.stat().st_size for p in src.files.values()) or 1
    done = 0

    def on_bytes(n: int) -> None:
        nonlocal done
        done += n
        job.set_progress(100.0 * done / total)
        if job.cancel_requested:
            job.check_cancelled()

    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    mtime = time.time()
    entries: list[FileEntry] = []
    job.set_status(f"writing {out.name}")
    with atomic_path(out) as tmp:
        with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT, copybufsize=HASH_CHUNK) as tf:
            for rel, data in generated.items():
                tf.addfile(_tarinfo(rel, len(data), mtime), io.BytesIO(data))
                entries.append(FileEntry(rel, len(data), hashlib.sha256(data).hexdigest()))
            for rel in sorted(src.files):
                path = src.files[rel]
                with open(path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    reader = _HashingReader(f, on_bytes)
                    try:
                        tf.addfile(_tarinfo(rel, size, mtime), reader)
                    except OSError as exc:
                        raise BundleError(f"{path} changed while it was being packaged: {exc}",
                                          offending=str(path), hint="package again") from exc
                entries.append(FileEntry(rel, reader.size, reader.h.hexdigest()))
            manifest = Manifest(name=name, version=version, board=profile.id, target=profile.target,
                                created=created, signer_public_key=encode_public(pub), signer_key_id=key_id(pub),
                                files=entries, forced=forced,
                                requires=cp.requirements(csrc) if csrc is not None else {},
                                tool=f"deployment-studio {__version__}")
            raw = manifest.canonical()
            sig = signing_key.sign(SIGNING_DOMAIN + raw).signature
            sig_raw = signature_doc(pub, sig, key_id(pub))
            tf.addfile(_tarinfo(MANIFEST_NAME, len(raw), mtime), io.BytesIO(raw))
            tf.addfile(_tarinfo(SIGNATURE_NAME, len(sig_raw), mtime), io.BytesIO(sig_raw))
    job.set_progress(100.0, force=True)
    return PackageReport(bundle=str(out), name=name, version=version, board=profile.id, target=profile.target,
                         verdict=verdict, forced=manifest.forced, files=len(entries),
                         total_bytes=manifest.total_size, seconds=round(time.perf_counter() - t0, 3),
                         signer_key_id=key_id(pub), served_models=[m["name"] for m in models],
                         runtime=runtime["runtime"], compiled=compiled_info, warnings=warnings,
                         left_out=[lo.to_dict() for lo in left_out], openssf=openssf, openssf_source=arriving)


def sign_directory(directory: Path | str, signing_key: Any, *, name: str, version: str, board: str = "any",
                   target: str = "", exclude: tuple[str, ...] = ()) -> Manifest:
    """Write ``manifest.json`` + ``manifest.sig`` into a folder (Triton model version, compiled artifact).

    :func:`studio.edge.verify.verify_directory` checks such a folder before anything in it is loaded;
    ``exclude`` lists globs (relative paths) left out of the manifest, to be passed as its ``allow_extra``.
    """
    import fnmatch

    root = Path(directory)
    entries = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_dir() or rel in (MANIFEST_NAME, SIGNATURE_NAME) or any(fnmatch.fnmatch(rel, e) for e in exclude):
            continue
        if p.is_symlink():
            raise BundleError(f"{rel} is a symlink; signed folders hold regular files only", offending=str(p),
                              hint="copy the file in instead of linking it")
        digest, size = sha256_file(p)
        entries.append(FileEntry(rel, size, digest))
    pub = bytes(signing_key.verify_key)
    m = Manifest(name=check_name(name, "name"), version=check_name(version, "version"), board=board, target=target,
                 created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), signer_public_key=encode_public(pub),
                 signer_key_id=key_id(pub), files=entries, tool=f"deployment-studio {__version__}")
    raw = m.canonical()
    sig = signing_key.sign(SIGNING_DOMAIN + raw).signature
    with atomic_path(root / MANIFEST_NAME) as t:
        t.write_bytes(raw)
    with atomic_path(root / SIGNATURE_NAME) as t:
        t.write_bytes(signature_doc(pub, sig, key_id(pub)))
    return m

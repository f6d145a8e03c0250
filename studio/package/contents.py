"""What of an export folder goes into a board's bundle: only what the board's runtime uses.

A folder source is walked whole (``bundle.collect_source``); before it is packed, every file is judged for the
board (``select_for_board``):

- kept: the ``.onnx`` models, the external data they reference, and everything else the runtime may read
  beside them (tokenizer / processor / config files, the export report, ...);
- left out, each with a note in the package report: compiled TVM modules (a folder with ``compiled.json``:
  another CPU's are useless, and even the board's own is not served from ``model/``: pass it with
  ``--compiled``), loose native code (``.so``/``.o``/``.a``, ELF files, ``model.tar`` object archives), models
  for other runtimes (TensorRT engines, ``.rknn``, ``.om``, ``.tflite``, ...) and framework weights
  (``.safetensors``, ``.pt``, ``pytorch_model*.bin``, ...) that ONNX Runtime never loads.

No TVM import: ELF machines are read from the headers (studio.edge.elf).
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from studio.package.boards import BoardProfile
from studio.package.compiled import META_FILE, norm_arch, read_compiled

NATIVE_SUFFIXES = (".so", ".o", ".a", ".dll", ".dylib", ".tar")
OTHER_RUNTIMES = {".engine": "TensorRT", ".plan": "TensorRT", ".trt": "TensorRT", ".rknn": "RKNN",
                  ".om": "Ascend CANN", ".tflite": "TensorFlow Lite", ".mlmodel": "Core ML", ".hef": "Hailo",
                  ".xmodel": "Vitis AI"}
FRAMEWORK_WEIGHTS = ("*.safetensors", "*.pt", "*.pth", "*.ckpt", "*.gguf", "*.h5", "*.msgpack",
                     "pytorch_model*.bin", "tf_model*.bin")


@dataclass
class LeftOut:
    """A file (or a compiled module folder, ``path`` ending in ``/``) not packed for the board, and why."""

    path: str  # bundle path under model/
    kind: str  # "compiled-module" | "native-code" | "other-runtime" | "framework-weights"
    reason: str
    arch: str = ""  # CPU architecture of compiled / native code, when known
    source: str = ""  # the file or folder on disk
    files: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def note(self) -> str:
        return f"left out {self.path}: {self.reason}"


@dataclass
class Selection:
    files: dict[str, Path]  # bundle path -> source file, what goes in
    left_out: list[LeftOut]
    compiled_dirs: list[Path]  # compile output folders found in the source (left out)


def _elf_arches(path: Path) -> set[str]:
    from studio.edge.elf import elf_arches

    return {norm_arch(m) for m in elf_arches(path)}


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def _arch_text(arches: set[str]) -> str:
    return ",".join(sorted(arches))


def compiled_dirs_in(files: dict[str, Path]) -> dict[str, Path]:
    """{bundle prefix ("model/sub/") : folder} of every compile output folder among ``files``."""
    out: dict[str, Path] = {}
    for rel, path in files.items():
        if rel.rsplit("/", 1)[-1] == META_FILE:
            out[rel.rsplit("/", 1)[0] + "/"] = path.parent
    return out


def _compiled_note(prefix: str, folder: Path, profile: BoardProfile, n: int) -> LeftOut:
    board_arch = norm_arch(profile.cpu_arch)
    try:
        c = read_compiled(folder)
    except Exception as exc:  # a failed or incomplete compile: nothing a board can run
        return LeftOut(prefix, "compiled-module", f"an unusable compile output folder ({exc})", source=str(folder),
                       files=n)
    target = c.meta.get("target_id") or (c.meta.get("target") or {}).get("kind") or "?"
    if c.arch and c.arch != board_arch:
        why = (f"a compiled TVM module for {c.arch} ({c.arch_source}, target {target}); board {profile.id} runs "
               f"{board_arch} with {profile.runtime}, so it could not load it")
    else:
        why = (f"a compiled TVM module (target {target}, {c.arch or 'CPU unknown'}) is not served from the model "
               f"folder (board {profile.id} runs the ONNX model with {profile.runtime}); to serve it, package "
               f"with --compiled {folder}")
    return LeftOut(prefix, "compiled-module", why, arch=c.arch, source=str(folder), files=n)


def _judge_file(rel: str, path: Path, profile: BoardProfile) -> LeftOut | None:
    """Why a loose file is of no use to the board's runtime, or None to keep it."""
    name = path.name.lower()
    board_arch = norm_arch(profile.cpu_arch)
    suffix = path.suffix.lower()
    if suffix in OTHER_RUNTIMES:
        return LeftOut(rel, "other-runtime", f"a model for {OTHER_RUNTIMES[suffix]}; board {profile.id} runs ONNX "
                                             f"models with {profile.runtime}", source=str(path))
    if any(fnmatch.fnmatch(name, g) for g in FRAMEWORK_WEIGHTS):
        return LeftOut(rel, "framework-weights", f"framework weights; {profile.runtime} runs the .onnx model, not "
                                                 "these", source=str(path))
    native = suffix in NATIVE_SUFFIXES or ".so." in name or _is_elf(path)
    if not native:
        return None
    arches = _elf_arches(path)
    if suffix == ".tar" and not arches:
        return None  # a plain archive, not object code
    what = "TVM object archive" if suffix == ".tar" else "native code"
    if arches and arches != {board_arch}:
        why = f"{what} for {_arch_text(arches)}; board {profile.id} is {board_arch}"
    else:
        why = (f"{what} ({_arch_text(arches) or 'CPU unknown'}) outside a compiled module; {profile.runtime} "
               "loads .onnx models, not native code")
    return LeftOut(rel, "native-code", why, arch=_arch_text(arches), source=str(path))


def select_for_board(files: dict[str, Path], onnx: list[str], profile: BoardProfile,
                     external: dict[str, list[Path]] | None = None, served_compiled: Path | None = None) -> Selection:
    """Judge every file of a folder source for ``profile`` (see the module docstring).

    ``external``: per ONNX bundle path, the external data files it references (always kept);
    ``served_compiled``: the folder passed with ``--compiled`` (packed under compiled/, so no note for it).
    """
    keep_paths = {p.resolve() for ps in (external or {}).values() for p in ps}
    kept: dict[str, Path] = {}
    left: list[LeftOut] = []
    cdirs = compiled_dirs_in(files)
    served = served_compiled.resolve() if served_compiled is not None else None
    for prefix, folder in sorted(cdirs.items()):
        members = [r for r in files if r.startswith(prefix) and r not in onnx]
        if served is None or folder.resolve() != served:
            left.append(_compiled_note(prefix, folder, profile, len(members)))
    for rel in sorted(files):
        path = files[rel]
        if rel in onnx or path.resolve() in keep_paths:
            kept[rel] = path
            continue
        if any(rel.startswith(prefix) for prefix in cdirs):
            continue
        judged = _judge_file(rel, path, profile)
        if judged is None:
            kept[rel] = path
        else:
            left.append(judged)
    return Selection(files=kept, left_out=left, compiled_dirs=list(cdirs.values()))

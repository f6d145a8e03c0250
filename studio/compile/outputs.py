"""Where compiled modules go: never into an export folder (a bundle made from that folder would carry them).

Default output folder of ``studio compile`` (``CompileOptions.out is None``), in this order:

1. the model lies in a studio workspace: ``WORKSPACE/compiled/<name>-<target>`` (what the Compile page uses);
2. else ``./compiled/<name>-<target>`` under the current folder;
3. unless that is inside the model's folder or an export folder: ``compiled/<name>-<target>`` beside the
   outermost such folder (in the user cache, ``~/.cache/deployment-studio/compiled/``, when that folder is
   the home folder, the temp folder or ``/``).

``<name>`` is the model file's stem, or the export folder's name for the generic ``model.onnx`` (a trailing
``-onnx``, the Export page's folder suffix, dropped). An explicit output folder inside an export folder is
refused (``InputError``, exit 2) before anything is written. Qt-free, TVM-free.
"""

from __future__ import annotations

import json
from pathlib import Path

from studio.core.errors import InputError

COMPILED_DIR = "compiled"
WORKSPACE_FILE = "workspace.json"
# Files `studio export` writes beside the model (besides the .onnx): any one of them marks an export folder.
EXPORT_MARKERS = ("export-report.json", "config.json", "generation_config.json", "tokenizer.json",
                  "tokenizer_config.json", "preprocessor_config.json", "processor_config.json",
                  "special_tokens_map.json", "vocab.txt", "vocab.json", "tokenizer.model")


def compiled_name(model: Path) -> str:
    """The name a compile output is called after: the model's stem, or its export folder's for model.onnx."""
    model = Path(model)
    if model.stem != "model" or not model.parent.name:
        return model.stem
    name = model.parent.name
    return name[: -len("-onnx")] if name.endswith("-onnx") and len(name) > len("-onnx") else name


def workspace_root(path: Path) -> Path | None:
    """The studio workspace holding ``path`` (a folder with workspace.json among its ancestors), or None."""
    for d in [Path(path), *Path(path).parents]:
        if (d / WORKSPACE_FILE).is_file():
            return d
    return None


def _workspace_model_dirs(root: Path) -> set[Path]:
    """Folders registered as models (export folders) in ``root``/workspace.json; read-only, no side effects."""
    try:
        data = json.loads((root / WORKSPACE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    out = set()
    for m in data.get("models") or []:
        if not isinstance(m, dict) or m.get("kind") != "onnx" or not m.get("path"):
            continue
        p = Path(str(m["path"]))
        p = p if p.is_absolute() else root / p
        if p.is_dir():
            out.add(p.resolve())
    return out


def is_export_folder(folder: Path, model_dirs: set[Path] | None = None) -> bool:
    """A folder holding an .onnx model with an export's companions or report, or a workspace's model folder."""
    folder = Path(folder)
    if not folder.is_dir():
        return False
    if model_dirs and folder.resolve() in model_dirs:
        return True
    try:
        names = {p.name for p in folder.iterdir() if p.is_file()}
    except OSError:
        return False
    if not any(n.endswith(".onnx") for n in names):
        return False
    return any(n in names for n in EXPORT_MARKERS) or any(n.endswith(".export-report.json") for n in names)


def _stops(path: Path) -> set[Path]:
    """Folders that are never export folders and never get a compiled/ beside them: home, temp, the root."""
    import tempfile

    return {Path.home().resolve(), Path(tempfile.gettempdir()).resolve(), Path(path.anchor)}


def export_folder_of(path: Path) -> Path | None:
    """The outermost export folder that ``path`` is (or is inside), stopping at a workspace root, the home
    folder, the temp folder and the filesystem root (never export folders themselves)."""
    path = Path(path).resolve()
    ws = workspace_root(path)
    model_dirs = _workspace_model_dirs(ws) if ws is not None else set()
    stops = _stops(path)
    found = None
    for d in [path, *path.parents]:
        if d == ws or d in stops:
            break
        if is_export_folder(d, model_dirs):
            found = d
    return found


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def default_out(model: Path, target: str, cwd: Path | None = None) -> Path:
    """The default output folder for compiling ``model`` for ``target`` (see the module docstring)."""
    model = Path(model).resolve()
    leaf = f"{compiled_name(model)}-{target}"
    ws = workspace_root(model.parent)
    if ws is not None:
        return ws / COMPILED_DIR / leaf
    out = Path(cwd or Path.cwd()).resolve() / COMPILED_DIR / leaf
    stops = _stops(out)
    for _ in range(64):  # beside the outermost enclosing model / export folder
        blockers = [b for b in (export_folder_of(out), model.parent if _inside(out, model.parent) else None) if b]
        if not blockers:
            return out
        top = min(blockers, key=lambda b: len(b.parts))
        if top in stops or top.parent == top:  # never beside /, home or the temp folder: the user cache
            from studio.core.paths import cache_dir

            return cache_dir() / COMPILED_DIR / leaf
        out = top.parent / COMPILED_DIR / leaf
    raise InputError(f"no default output folder for {model} outside its folder", offending=str(model),
                     hint="pass --out DIR (a folder outside the export folder)")


def check_out(out: Path, model: Path, target: str) -> None:
    """Refuse an output folder inside an export folder (InputError, exit 2), before anything is written."""
    folder = export_folder_of(out)
    if folder is None:
        return
    try:
        suggestion = default_out(model, target)
    except InputError:
        suggestion = folder.parent / COMPILED_DIR / f"{compiled_name(Path(model))}-{target}"
    raise InputError(
        f"output folder {out} is inside the export folder {folder}: a bundle made from that folder would "
        "carry the compiled module", offending=str(out),
        hint=f"write compiled modules outside export folders: --out {suggestion} (the Output field on the "
             "Compile page), or omit it for the default (WORKSPACE/compiled/ or ./compiled/)")

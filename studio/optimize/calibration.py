"""A calibration folder as model feeds: the samples an INT8 build calibrates on and a search judges accuracy on.

The folder holds what a user has: images (.png .jpg ...), texts (.txt, one sample per line), audio (.wav), or
arrays (.npz, one sample each, arrays named like the model's inputs). Raw samples go through the model's own
processor files (its tokenizer.json, its image / feature-extractor settings), with the preprocessing the edge
agent runs (studio.edge.preprocess: PIL, numpy and tokenizers, no torch), so calibration sees what deployment
sees. Texts are padded to one length: the model's static sequence dim, else the longest text.

    cal = calibration_feeds(Path("cal"), Path("export/model.text.onnx"))
    cal.feeds[0]["input_ids"].shape, cal.source
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import InputError

IMAGE_EXT = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")
TEXT_EXT = (".txt",)
AUDIO_EXT = (".wav",)
ARRAY_EXT = (".npz",)
KIND_EXT = {"image": IMAGE_EXT, "text": TEXT_EXT, "audio": AUDIO_EXT, "arrays": ARRAY_EXT}
HINT = ("put calibration samples in the folder: images (.png, .jpg), texts (.txt, one per line), audio (.wav) or "
        "arrays (.npz named like the model's inputs)")


@dataclass
class CalibrationSet:
    """Feeds (one sample each, batch 1) and where they came from."""

    feeds: list[dict[str, np.ndarray]]
    source: str
    files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def scan(folder: Path | str) -> dict[str, list[Path]]:
    """The folder's samples by kind; an InputError naming the folder when it is missing, not a folder or holds
    nothing usable."""
    folder = Path(folder)
    if not folder.exists():
        raise InputError(f"calibration folder {folder} does not exist", offending=str(folder), hint=HINT)
    if not folder.is_dir():
        raise InputError(f"--calibration must be a folder, {folder} is a file", offending=str(folder), hint=HINT)
    found: dict[str, list[Path]] = {k: [] for k in KIND_EXT}
    for p in sorted(folder.iterdir()):
        for kind, exts in KIND_EXT.items():
            if p.is_file() and p.suffix.lower() in exts:
                found[kind].append(p)
    if not any(found.values()):
        raise InputError(f"calibration folder {folder} holds no samples", offending=str(folder), hint=HINT)
    return found


def _texts(files: list[Path]) -> list[str]:
    out = []
    for f in files:
        out += [line.strip() for line in f.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    return out


def model_inputs(model: Path) -> list[dict[str, Any]]:
    """Graph inputs: name, numpy dtype, dims (int, or the symbol's name)."""
    import onnx

    m = onnx.load(str(model), load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    out = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        tt = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
        out.append({"name": i.name, "dtype": onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type), "dims": dims})
    return out


def calibration_feeds(folder: Path | str, model: Path | str, *, processor_dir: Path | None = None,
                      limit: int = 64) -> CalibrationSet:
    """Feeds for ``model``'s inputs from ``folder`` (see the module docstring); at most ``limit`` samples."""
    folder, model = Path(folder), Path(model)
    found = scan(folder)
    inputs = model_inputs(model)
    names = [i["name"] for i in inputs]
    if found["arrays"]:
        return _from_arrays(found["arrays"][:limit], inputs, folder)
    from studio.edge.raw_inputs import declare_raw_inputs

    proc = Path(processor_dir) if processor_dir else model.parent
    declared = declare_raw_inputs([{"name": i["name"], "shape": i["dims"]} for i in inputs], proc)
    covered = {t for d in declared for t in d["produces"]}
    missing = [n for n in names if n not in covered]
    if missing:
        raise InputError(f"no way to make the input(s) {', '.join(missing)} of {model.name} from raw samples",
                         offending=", ".join(missing),
                         hint=f"the folder beside the model ({proc}) needs its tokenizer / processor files (an "
                              "export folder has them), or give .npz samples named like the inputs")
    from studio.edge.preprocess import build_preprocessors

    pre = build_preprocessors(declared, proc)
    samples: dict[str, list[Any]] = {}
    used: list[str] = []
    for d in declared:
        kind = d["kind"]
        if kind == "text":
            texts = _texts(found["text"])
            if not texts:
                raise InputError(f"calibration folder {folder} has no texts for {model.name}'s "
                                 f"{', '.join(d['produces'])}", offending=str(folder),
                                 hint="add a .txt file with one sample text per line")
            samples[kind] = texts[:limit]
            used += [str(f) for f in found["text"]]
        else:
            files = found[kind][:limit]
            if not files:
                ext = ", ".join(KIND_EXT[kind][:3])
                raise InputError(f"calibration folder {folder} has no {kind} samples for {model.name}'s "
                                 f"{', '.join(d['produces'])}", offending=str(folder), hint=f"add {kind} files ({ext})")
            samples[kind] = files
            used += [str(f) for f in files]
    count = max(len(v) for v in samples.values())
    feeds: list[dict[str, np.ndarray]] = [{} for _ in range(count)]
    shapes = {i["name"]: i["dims"] for i in inputs}
    for d in declared:
        kind, fn = d["kind"], pre[d["name"]].fn
        items = samples[d["kind"]]
        if kind == "text":
            length = _seq_len(shapes, d["produces"])
            batch = fn([t.encode("utf-8") for t in items])
            pad = {"input_ids": int(getattr(fn, "pad_id", 0))}
            arrays = {k: _fit(v, length, pad.get(k, 0)) for k, v in batch.items()}
            rows = [{k: v[j:j + 1] for k, v in arrays.items()} for j in range(len(items))]
        else:
            rows = [fn([Path(f).read_bytes()]) for f in items]
        for j in range(count):
            feeds[j].update(rows[j % len(rows)])
    dtypes = {i["name"]: i["dtype"] for i in inputs}
    feeds = [{k: np.ascontiguousarray(v.astype(dtypes[k], copy=False)) for k, v in f.items() if k in dtypes}
             for f in feeds]
    kinds = ", ".join(f"{len(v)} {k}{'s' if len(v) != 1 else ''}" for k, v in samples.items())
    return CalibrationSet(feeds, f"{kinds} from {folder} through {model.name}'s processor files ({proc})", used)


def _seq_len(shapes: dict[str, list[Any]], produces: list[str]) -> int | None:
    """The static sequence length of the text inputs (None: pad to the longest text)."""
    for name in produces:
        dims = shapes.get(name) or []
        if len(dims) == 2 and isinstance(dims[1], int) and dims[1] > 0:
            return dims[1]
    return None


def _fit(a: np.ndarray, length: int | None, pad_value: int = 0) -> np.ndarray:
    """Pad (ids with the tokenizer's pad id, masks and types with 0) or cut to ``length`` along the sequence
    axis."""
    if length is None or a.shape[1] == length:
        return a
    if a.shape[1] > length:
        return a[:, :length]
    pad = np.full((a.shape[0], length - a.shape[1]), pad_value, dtype=a.dtype)
    return np.concatenate([a, pad], axis=1)


def _from_arrays(files: list[Path], inputs: list[dict[str, Any]], folder: Path) -> CalibrationSet:
    feeds = []
    for f in files:
        with np.load(f) as z:
            missing = [i["name"] for i in inputs if i["name"] not in z]
            if missing:
                raise InputError(f"calibration sample {f.name} has no array for {', '.join(missing)}",
                                 offending=str(f), hint="save every sample with numpy.savez(PATH, **{input: array})")
            feeds.append({i["name"]: np.ascontiguousarray(z[i["name"]].astype(i["dtype"], copy=False))
                          for i in inputs})
    return CalibrationSet(feeds, f"{len(feeds)} .npz samples from {folder}", [str(f) for f in files])


def save_feeds(feeds: list[dict[str, np.ndarray]], folder: Path) -> list[Path]:
    """One ``NNNN.npz`` per feed (what ``studio compile --calibration`` and a re-run read back)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k, f in enumerate(feeds):
        p = folder / f"{k:04d}.npz"
        np.savez(p, **f)
        out.append(p)
    return out

"""tiny-clip exported by the studio itself (split: vision, text, fusion), a calibration folder of a few images and
texts, and a private optimize cache per test (the rknn-toolkit2 environment stays in the user's cache)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"
for plugin in ("studio-rknn", "studio-openvino"):
    if str(PLUGINS / plugin) not in sys.path:
        try:
            __import__(plugin.replace("-", "_"))
        except ImportError:
            sys.path.insert(0, str(PLUGINS / plugin))


@pytest.fixture(scope="session")
def clip_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export folder (clip.onnx, clip.vision.onnx, clip.text.onnx, clip.fusion.onnx and processor files)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from studio.export.api import ExportOptions, export_model
    from studio.export.samples import write_sample

    root = tmp_path_factory.mktemp("tune-clip")
    write_sample("tiny-clip", root / "src")
    export_model(ExportOptions(model_dir=root / "src", output=root / "out" / "clip.onnx", split_modalities=True))
    return root / "out"


@pytest.fixture(scope="session")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four images of different sizes (the processor resizes them) and four captions."""
    from PIL import Image

    folder = tmp_path_factory.mktemp("tune-cal")
    rng = np.random.default_rng(3)
    for i in range(4):
        h, w = 40 + 8 * i, 64 - 4 * i
        grad = np.linspace(0, 1, h * w, dtype=np.float32).reshape(h, w, 1)
        img = np.clip(rng.integers(30, 220, (1, 1, 3)) * (0.5 + grad) + rng.normal(0, 20, (h, w, 3)), 0, 255)
        Image.fromarray(img.astype(np.uint8)).save(folder / f"img{i}.png")
    (folder / "captions.txt").write_text("a cat on a sofa\na photo of a dog\na red car\nblue sky over the sea\n",
                                         encoding="utf-8")
    return folder


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from studio.tune import cache

    root = tmp_path / "optimize-cache"
    monkeypatch.setattr(cache, "cache_root", lambda: root)
    return root


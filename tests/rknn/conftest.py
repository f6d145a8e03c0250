"""The rknn plugin from the main suite: its checkout copy when it is not pip-installed, and the toolkit's
environment (tests that need it skip with the command that creates it: studio-rknn-env create)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "studio-rknn"
try:
    import studio_rknn  # noqa: F401
except ImportError:
    sys.path.insert(0, str(PLUGIN))


@pytest.fixture(scope="session")
def rknn_env() -> Path:
    from studio_rknn import env

    status = env.check_env()
    if not status.ok:
        pytest.skip(status.reason)
    return status.path


@pytest.fixture(scope="session")
def clip_parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """tiny-clip exported by the studio itself, split per modality (vision and text parts, dynamic batch)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from studio.export.api import ExportOptions, export_model
    from studio.export.samples import write_sample

    root = tmp_path_factory.mktemp("rknn-clip")
    write_sample("tiny-clip", root / "src")
    rep = export_model(ExportOptions(model_dir=root / "src", output=root / "out" / "clip.onnx",
                                     split_modalities=True))
    return {name: Path(part["path"]) for name, part in rep.parts.items()}

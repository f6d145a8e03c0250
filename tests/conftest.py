"""Suite-wide fixtures: an isolated config folder so tests never touch the user's settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDIO_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Screenshots and other things a person may want to look at after a run."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


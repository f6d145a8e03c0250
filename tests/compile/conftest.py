"""Compile-test fixtures: tiny models and module-scoped compiles (TVM builds are slow on 2 cores)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

HAS_TVM = importlib.util.find_spec("tvm") is not None
needs_tvm = pytest.mark.skipif(not HAS_TVM, reason="apache-tvm is not installed (extra 'compile')")


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compile-models")


@pytest.fixture(scope="session")
def cnn_onnx(models_dir: Path) -> Path:
    from models import small_cnn

    return small_cnn(models_dir / "cnn.onnx")


@pytest.fixture(scope="session")
def loop_onnx(models_dir: Path) -> Path:
    from models import with_loop

    return with_loop(models_dir / "loop.onnx")


@pytest.fixture(scope="session")
def import_failure_onnx(models_dir: Path) -> Path:
    from models import import_failure

    return import_failure(models_dir / "fails_import.onnx")

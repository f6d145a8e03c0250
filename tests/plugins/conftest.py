"""Fixtures of the plugin tests: the outside example plugins installed as real distributions, elsewhere.

``pip install --target SITE --no-deps`` puts each plugin's package and its ``.dist-info`` (with the
``studio.plugins`` entry points) into a throwaway folder; subprocesses see it through PYTHONPATH, in-process
tests through ``sys.path``. The project's venv is never touched. The sources are copied first so the build
leaves no ``build/`` or ``*.egg-info`` in the checkout. No network: setuptools comes from the running venv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "plugins"


def install_plugin(name: str, dest: Path) -> Path:
    """``plugins/<name>`` installed into ``dest/site`` (created); returns the site folder."""
    src = dest / "src" / name
    shutil.copytree(PLUGINS / name, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    site = dest / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--no-index", "--disable-pip-version-check", "--target", str(site), str(src)],
                          capture_output=True, text=True, timeout=300, cwd=dest)
    assert proc.returncode == 0, f"pip install {name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return site


@pytest.fixture(scope="session")
def example_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_plugin("studio-example", tmp_path_factory.mktemp("example"))


@pytest.fixture(scope="session")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_plugin("studio-broken-example", tmp_path_factory.mktemp("broken"))


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    return d


@pytest.fixture()
def studio(outside: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``studio(*argv, sites=[...])``: the real CLI in a subprocess that sees those plugin sites."""

    def run(*argv: str, sites: list[Path] = (), code: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(s) for s in sites)}
        env.pop("STUDIO_DEBUG", None)
        cmd = [sys.executable, "-c", code, *argv] if code else [sys.executable, "-m", "studio.cli.main", *argv]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=outside)

    return run


@pytest.fixture(scope="session")
def tiny_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Relu (the example NPU runs it), Softmax (its CPU fallback), Erf (no lowering)."""
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
             helper.make_node("Softmax", ["a"], ["b"], name="sm"),
             helper.make_node("Erf", ["b"], ["y"], name="erf")]
    model = helper.make_model(helper.make_graph(nodes, "tiny", [x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("models") / "tiny.onnx"
    onnx.save(model, str(path))
    return path

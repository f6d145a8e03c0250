"""The core stays headless at import time: no PySide6 in core packages, no torch behind inspect/triton/package/agent,
checked by importing each module with those packages blocked. Which package may import which (the layers, the edge
layer below package and agent, Qt and torch even inside functions) is import-linter's: tests/core/test_layers.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CORE_PACKAGES = ["studio.core", "studio.export.api", "studio.export.contract", "studio.inspect", "studio.optimize", "studio.tune", "studio.triton",
                 "studio.edge", "studio.package", "studio.agent", "studio.telemetry", "studio.compile",
                 "studio.profiling", "studio.diff", "studio.generate", "studio.fleet", "studio.desktop"]

BLOCKER = textwrap.dedent("""
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def __init__(self, names): self.names = names
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in self.names:
                raise ImportError(f'blocked import of {name}')
            return None
    sys.meta_path.insert(0, Block(BLOCKED))
""")


def _run(code: str, blocked: set[str]) -> subprocess.CompletedProcess[str]:
    src = f"BLOCKED = {blocked!r}\n" + BLOCKER + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)


def _walk_modules(package: str) -> list[str]:
    import importlib
    import pkgutil

    mod = importlib.import_module(package)
    names = [package]
    if hasattr(mod, "__path__"):
        names += [m.name for m in pkgutil.walk_packages(mod.__path__, package + ".")]
    return names


@pytest.mark.parametrize("package", CORE_PACKAGES)
def test_core_imports_without_pyside6_and_torch(package: str) -> None:
    modules = _walk_modules(package)
    # Modules that exist only to drive torch (export internals) are allowed torch, never Qt.
    torch_ok = [m for m in modules if m.startswith("studio.export.") and m not in ("studio.export.api",
                                                                                "studio.export.contract")]
    torch_ok.append("studio.profiling.torch_modules")  # PyTorch per-module times; imported only for HF models
    for m in modules:
        blocked = {"PySide6", "pyqtgraph"} | (set() if m in torch_ok else {"torch", "transformers"})
        proc = _run(f"import {m}", blocked)
        assert proc.returncode == 0, f"{m} imports a blocked package:\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("argv", [["--version"], ["inspect", "--help"], ["triton", "--help"],
                                  ["package", "--help"], ["--help"], ["diff", "--help"], ["generate", "--help"],
                                  ["completion", "bash"], ["gui", "--help"]])
def test_cli_paths_do_not_import_torch(argv: list[str]) -> None:
    code = f"""
        import sys
        from studio.cli.main import main
        try:
            rc = main({argv!r})
        except SystemExit as e:
            rc = e.code
        assert rc in (0, None), rc
        assert 'torch' not in sys.modules and 'PySide6' not in sys.modules
    """
    proc = _run(code, {"torch", "transformers", "PySide6"})
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_agent_imports_without_torch_and_qt() -> None:
    proc = _run("import studio.agent.server", {"torch", "transformers", "PySide6"})
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_diff_command_runs_without_torch_and_qt(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`studio diff` itself (not only its --help) reads and compares models with torch and Qt blocked."""
    code = f"""
        import sys
        import onnx
        from studio.inspect.synthetic import transformer_model
        from studio.cli.main import main
        path = {str(tmp_path / "m.onnx")!r}
        onnx.save(transformer_model(layers=1), path)
        rc = main(["diff", path, path, "--format", "json", "--fail-on-change"])
        assert rc == 0, rc
        assert 'torch' not in sys.modules and 'PySide6' not in sys.modules
    """
    proc = _run(code, {"torch", "transformers", "PySide6"})
    assert proc.returncode == 0, proc.stderr[-2000:]

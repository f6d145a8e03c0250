"""Without apache-tvm (an import blocker in a subprocess): the plugin shows unavailable with the install hint,
`studio compile` exits non-zero with that hint, and the compile package still imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

BLOCK = textwrap.dedent("""
    import importlib.abc, sys
    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] == 'tvm':
                raise ModuleNotFoundError(f"No module named {name!r} (blocked)")
            return None
    sys.meta_path.insert(0, Block())
    from studio.cli.main import main
    rc = main(sys.argv[1:])
    assert 'tvm' not in sys.modules
    sys.exit(rc)
""")


def _studio(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK, *argv], capture_output=True, text=True, timeout=120)


def test_plugin_unavailable_with_clear_message() -> None:
    proc = _studio("plugins")
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if "tvm-compile" in ln)
    assert line.startswith("ERR") and "missing tvm" in line and "deployment-studio[compile]" in line


def test_compile_exits_nonzero_with_install_hint(cnn_onnx: Path, tmp_path: Path) -> None:
    proc = _studio("compile", str(cnn_onnx), "--target", "llvm", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "needs the Python package 'tvm'" in proc.stderr
    assert "pip install" in proc.stderr and "apache-tvm" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_status_and_targets_work_without_tvm() -> None:
    proc = _studio("compile", "--status")
    assert proc.returncode == 0 and "apache-tvm" in proc.stdout and "mlc_llm" in proc.stdout
    proc = _studio("compile", "--list-targets")
    assert proc.returncode == 0 and "rk3588" in proc.stdout and "aarch64-neon" in proc.stdout

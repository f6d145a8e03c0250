"""The core stays headless: no PySide6 in core packages, no torch behind inspect/triton/package/agent; and the
edge layers point one way: studio.edge below, studio.package and studio.agent above it, neither importing the other."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CORE_PACKAGES = ["studio.core", "studio.export.api", "studio.inspect", "studio.optimize", "studio.tune", "studio.triton",
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
    torch_ok = [m for m in modules if m.startswith("studio.export.") and m != "studio.export.api"]
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


# -------------------------------------------------------------------------------- edge layering (AST, no imports)

STUDIO = Path(__file__).resolve().parents[2] / "studio"
# The agent reads the board registry (board_accepts, detect_board) from studio.package.boards until the board data
# lives in one registry below both (issue 17's board work); nothing else of studio.package.
AGENT_MAY_IMPORT = {"studio.package.boards"}


def _imports_of(package: str) -> list[tuple[str, int, str]]:
    """(file, line, imported module) for every import in a package, module-level or inside functions."""
    root = STUDIO.parent
    found: list[tuple[str, int, str]] = []
    for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        here = rel.removesuffix(".py").removesuffix("/__init__").split("/")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.Import):
                found += [(rel, node.lineno, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolve against the importing module's package
                    pkg = here if path.name == "__init__.py" else here[:-1]
                    base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
                found.append((rel, node.lineno, base))
                found += [(rel, node.lineno, f"{base}.{a.name}") for a in node.names]  # from studio import agent
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _into(imports: list[tuple[str, int, str]], package: str, allowed: set[str] | None = None) -> list[str]:
    return [f"{f}:{n} imports {m}" for f, n, m in imports
            if _within(m, package) and not any(_within(m, a) for a in allowed or ())]


def test_package_never_imports_agent() -> None:
    assert _into(_imports_of("studio.package"), "studio.agent") == []


def test_agent_imports_of_package_are_the_board_registry_only() -> None:
    bad = _into(_imports_of("studio.agent"), "studio.package", AGENT_MAY_IMPORT)
    assert bad == [], "the agent takes bundle verification, keys and tensor names from studio.edge"


def test_edge_imports_neither_package_nor_agent() -> None:
    imports = _imports_of("studio.edge")
    assert _into(imports, "studio.package") + _into(imports, "studio.agent") == []
    assert {m.split(".")[1] for _, _, m in imports if m.startswith("studio.")} <= {"core", "edge"}


def test_the_walk_sees_imports() -> None:
    """The contract checks above pass vacuously if the walk finds nothing: it must see the known edges."""
    assert "studio/agent/core.py" in {f for f, _, m in _imports_of("studio.agent") if m == "studio.edge.verify"}
    assert _into(_imports_of("studio.package"), "studio.edge")


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

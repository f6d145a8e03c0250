"""The layers of pyproject.toml's [tool.importlinter] hold: no module imports a layer above its own (or a sibling
marked independent), no package below the entry points imports in a circle, the agent takes only the board registry
from studio.package, Qt stays in the GUI and torch out of the deployment packages. The same contracts `make lint`
runs with `lint-imports`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

importlinter = pytest.importorskip("importlinter", reason="import-linter is a dev dependency: pip install -e '.[dev]'")

from importlinter.application.use_cases import read_user_options  # noqa: E402
from importlinter.cli import lint_imports  # noqa: E402
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract  # noqa: E402
from importlinter.contracts.forbidden import ForbiddenContract  # noqa: E402
from importlinter.contracts.layers import LayersContract  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


@pytest.fixture(scope="module")
def options() -> Any:
    return read_user_options(str(PYPROJECT))


@pytest.fixture(scope="module")
def graph() -> Any:
    import grimp

    return grimp.build_graph("studio", include_external_packages=True, exclude_type_checking_imports=True,
                             cache_dir=None)


def _contract(options: Any, cid: str, cls: type) -> Any:
    raw = next(c for c in options.contracts_options if c.get("id") == cid)
    return cls(name=raw["name"], session_options=options.session_options, contract_options=raw)


def test_every_contract_is_kept(capsys: pytest.CaptureFixture[str]) -> None:
    rc = lint_imports(config_filename=str(PYPROJECT), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert rc == 0, f"an import breaks the layers (move it to the layer where it belongs):\n{out[-6000:]}"
    assert "5 kept, 0 broken" in out, out[-2000:]


def test_the_graph_sees_the_known_edges(graph: Any) -> None:
    """The contracts pass vacuously if the graph is empty: it must hold imports inside functions too."""
    assert "studio.edge.verify" in graph.find_modules_directly_imported_by("studio.agent.core")
    assert "studio.inspect.api" in graph.find_modules_directly_imported_by("studio.cli.inspect_cmd")  # lazy


@pytest.mark.parametrize(("importer", "imported"), [
    ("studio.core.errors", "studio.gui.page"),          # core reaching the top
    ("studio.edge.verify", "studio.package.bundle"),    # the shared layer reaching a domain package
    ("studio.inspect.api", "studio.compile.runner"),    # a lower domain layer reaching a higher one
    ("studio.triton.client", "studio.agent.core"),      # independent siblings
    ("studio.gui.app", "studio.cli.main"),              # the GUI reaching the CLI
])
def test_an_upward_import_breaks_the_layers(options: Any, graph: Any, importer: str, imported: str) -> None:
    contract = _contract(options, "layers", LayersContract)
    assert contract.check(copy.deepcopy(graph), verbose=False).kept
    g = copy.deepcopy(graph)
    g.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
    assert not contract.check(g, verbose=False).kept


@pytest.mark.parametrize(("cid", "importer", "imported"), [
    ("no-qt", "studio.inspect.api", "PySide6"),
    ("no-torch", "studio.agent.runtime", "torch"),
    ("agent-package", "studio.agent.core", "studio.package.bundle"),
])
def test_a_forbidden_import_breaks_its_contract(options: Any, graph: Any, cid: str, importer: str,
                                                imported: str) -> None:
    contract = _contract(options, cid, ForbiddenContract)
    g = copy.deepcopy(graph)
    g.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
    assert not contract.check(g, verbose=False).kept


@pytest.mark.parametrize(("importer", "imported"), [
    ("studio.export.contract", "studio.export.api"),          # a contract importing its entry point
    ("studio.generate.serving_media", "studio.generate.serving"),  # a kind importing the list that imports it
    ("studio.inspect.profile_model", "studio.inspect.profiles"),
])
def test_an_import_circle_breaks_the_acyclic_contract(options: Any, graph: Any, importer: str, imported: str) -> None:
    contract = _contract(options, "acyclic", AcyclicSiblingsContract)
    assert contract.check(copy.deepcopy(graph), verbose=False).kept
    g = copy.deepcopy(graph)
    g.add_import(importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}")
    assert not contract.check(g, verbose=False).kept

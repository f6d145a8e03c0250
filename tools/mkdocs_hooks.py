"""MkDocs hooks of the docs site (mkdocs.yml ``hooks:``): pages made at build time, so they never drift.

- ``reference/cli.md``: the CLI reference, from the argument parsers (``studio.cli.docs``);
- ``benchmarks.md``: BENCHMARKS.md of the repository root, which stays where the bench scripts append to it.
Neither is a file in docs/: every ``mkdocs build`` (``make docs``, tests/docs) writes them anew.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

GENERATED = ("reference/cli.md", "benchmarks.md")


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    root = _root(config)
    if str(root) not in sys.path:  # the checkout's studio, also without an editable install
        sys.path.insert(0, str(root))
    from studio.cli.docs import cli_reference

    files.append(File.generated(config, "reference/cli.md", content=cli_reference()))
    bench = (root / "BENCHMARKS.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "benchmarks.md", content=bench))
    return files

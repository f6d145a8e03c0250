"""Old spellings the core still accepts, told to the CLI user: each StudioDeprecationWarning once, on stderr.

``studio.cli.main.guarded`` runs every command inside ``studio_warnings_to_stderr()``; the line reads
``warning: --shape 'x:1,64' is an old spelling; write x=1,64`` (the way errors read ``error: ...``).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from studio.core.errors import StudioDeprecationWarning


@contextmanager
def studio_warnings_to_stderr() -> Iterator[None]:
    """Inside: every StudioDeprecationWarning is printed once per message; other warnings go where they went."""
    seen: set[str] = set()
    previous = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None, **_kw: Any) -> None:
        if not issubclass(category, StudioDeprecationWarning):
            previous(message, category, filename, lineno, file, line)
            return
        text = str(message)
        if text not in seen:
            seen.add(text)
            print(f"warning: {text}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.simplefilter("always", StudioDeprecationWarning)
        warnings.showwarning = show
        yield

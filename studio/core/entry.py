"""How an entry point runs a command (`studio`, `python -m studio.gui`): a StudioError is printed as
``error: ...`` with its hint and no traceback (unless --debug), Ctrl-C exits 130, and every StudioDeprecationWarning
(an old spelling the core still accepts) is printed once as ``warning: --shape 'x:1,64' is an old spelling; write
x=1,64``, the way errors read.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

# studio.core.errors is imported inside the functions: `studio --version` imports this module and must stay fast


@contextmanager
def studio_warnings_to_stderr() -> Iterator[None]:
    """Inside: every StudioDeprecationWarning is printed once per message; other warnings go where they went."""
    from studio.core.errors import StudioDeprecationWarning

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


def guarded(fn, debug: bool = False) -> int:  # type: ignore[no-untyped-def]
    """Run ``fn``; print StudioErrors without a traceback (unless --debug) and return an exit code."""
    from studio.core.errors import StudioError

    try:
        with studio_warnings_to_stderr():  # old spellings: `warning: ...` once each
            rc = fn()
        return int(rc or 0)
    except StudioError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(exc.render(), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

"""The shell-completion plumbing every entry point shares (argcomplete, a core dependency): marking a flag with
the function that lists its values, and answering a shell's Tab request before anything else runs.

`studio`'s programs and parsers are studio.cli.completion's; the registry completers are studio.cli.completers'.
Here sits only what the lower entry points need too: `studio-agent` (studio.agent.cli) and the GUI's own parser
(studio.gui.app) mark their flags and answer their Tab without importing studio.cli.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable

Completer = Callable[..., Iterable[str]]


def requested() -> bool:
    """True when a shell's completion function started this process."""
    return "_ARGCOMPLETE" in os.environ


def complete_with(action: argparse.Action, completer: Completer) -> argparse.Action:
    """Attach ``completer`` to a flag (argcomplete reads ``action.completer``); returns the action."""
    action.completer = completer  # type: ignore[attr-defined]
    return action


def quiet(fn: Callable[[], Iterable[str]]) -> list[str]:
    """A completer never fails a Tab: a broken profile or plugin gives no candidates from that source."""
    try:
        return list(fn())
    except Exception:  # noqa: BLE001 (any error in a registry: complete nothing rather than print a traceback)
        return []


def answer_and_exit(parser: argparse.ArgumentParser) -> None:
    """Answer the shell's completion request from ``parser`` and exit.

    Without argcomplete (a broken install) the process exits 1 and the shell falls back to file names."""
    try:
        import argcomplete
    except ImportError:
        sys.exit(1)
    argcomplete.autocomplete(parser, always_complete_options="long", exit_method=os._exit)
    os._exit(1)  # autocomplete returned: the request was not for this parser

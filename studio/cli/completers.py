"""Values a shell completes for flags whose values live in a registry: target ids, board ids, compile targets,
GUI page ids. Each reads the registry the command itself reads, at Tab time, so a new profile, board file or
plugin is completed without regenerating anything.

Flags are marked where they are declared (``complete_with(p.add_argument(...), TARGETS)``); the attribute is
argcomplete's ``completer`` and costs nothing when no shell asks. The functions import their registry only
when called and never import torch or Qt (tests/cli/test_completion.py checks both).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any

Completer = Callable[..., Iterable[str]]


def complete_with(action: argparse.Action, completer: Completer) -> argparse.Action:
    """Attach ``completer`` to a flag (argcomplete reads ``action.completer``); returns the action."""
    action.completer = completer  # type: ignore[attr-defined]
    return action


def _quiet(fn: Callable[[], Iterable[str]]) -> list[str]:
    """A completer never fails a Tab: a broken profile or plugin gives no candidates from that source."""
    try:
        return list(fn())
    except Exception:  # noqa: BLE001 (any error in a registry: complete nothing rather than print a traceback)
        return []


def _profile_dirs(parsed_args: Any) -> list[Any] | None:
    """--profile-dir / --workspace already typed on the line add their profiles, as the command would."""
    if parsed_args is None:
        return None
    from studio.cli.inspect_cmd import profile_dirs_from

    try:
        return profile_dirs_from(parsed_args) or None
    except Exception:  # noqa: BLE001 (a half-typed folder: the built-in and plugin targets only)
        return None


def inspector_target_ids(parsed_args: Any = None) -> list[str]:
    """The inspector's target ids (built-in profiles, plugins', the user's) as `studio targets` lists them."""
    from studio.inspect.profiles import list_targets

    dirs = _profile_dirs(parsed_args)
    return _quiet(lambda: [p.id for p in list_targets(dirs)]) or _quiet(lambda: [p.id for p in list_targets()])


def targets(prefix: str = "", parsed_args: Any = None, **_: Any) -> list[str]:
    return inspector_target_ids(parsed_args)


def targets_or_all(prefix: str = "", parsed_args: Any = None, **_: Any) -> list[str]:
    """For flags that also take 'all' (`studio inspect --target`)."""
    return [*inspector_target_ids(parsed_args), "all"]


def boards(prefix: str = "", **_: Any) -> list[str]:
    """Board ids from the board registry (file names: no YAML is read)."""
    from studio.package.boards import board_ids

    return _quiet(board_ids)


def agent_boards(prefix: str = "", **_: Any) -> list[str]:
    """`studio-agent --board`: a board id, or 'auto' (detect) / 'any' (accept every bundle)."""
    return ["auto", "any", *boards()]


def compile_targets(prefix: str = "", **_: Any) -> list[str]:
    """`studio compile --target`: TVM's targets and the boards with a compile section."""
    from studio.compile.targets import target_ids

    return _quiet(target_ids)


def pages(prefix: str = "", **_: Any) -> list[str]:
    """`studio gui --page`: the sidebar's page ids, read from the page modules without importing Qt."""
    from studio.gui.page_ids import page_ids

    return _quiet(page_ids)

"""Shell completion for `studio`, `multimodal-export`, `multimodal-serve` and `studio-agent` (bash and zsh).

The shell script is argcomplete's: at each Tab the shell runs the command itself with ``_ARGCOMPLETE`` set, and
the command's entry point calls :func:`complete_and_exit` before anything else. Candidates come from the very
parsers the commands run with (``COMMANDS`` and each ``<x>_cmd.add_arguments``, ``studio.agent.cli``'s parser,
the multimodal-serve alias's), so a new flag completes without regenerating anything; values of registry
flags come from ``studio.cli.completers``. Only the subcommand being typed has its parser built, and nothing
here imports torch or Qt (tests/cli/test_completion.py; latency in BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import os
import shlex
from collections.abc import Callable

PROGRAMS = ("studio", "multimodal-export", "multimodal-serve", "studio-agent")
SHELLS = ("bash", "zsh")


def _typed_words() -> list[str]:
    """The words typed before the cursor (the shell passes the line and the cursor position)."""
    line = os.environ.get("COMP_LINE", "")
    try:
        point = int(os.environ.get("COMP_POINT", len(line)))
    except ValueError:
        point = len(line)
    try:
        return shlex.split(line[:point])
    except ValueError:  # an open quote: split what can be split
        return line[:point].split()


def studio_parser(words: list[str] | None = None) -> argparse.ArgumentParser:
    """`studio`'s whole tree for completion: every command named, and the full parser of the one being typed
    (building all of them would import every command module at each Tab)."""
    from studio.cli import main as cli

    words = _typed_words() if words is None else words
    typed = next((w for w in words[1:] if not w.startswith("-")), None)
    p = argparse.ArgumentParser(prog="studio")
    p.add_argument("--version", action="version", version="studio")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in cli.COMMANDS.items():
        if not cli._available(name):
            continue
        sp = sub.add_parser(name, help=help_, description=help_)
        if name == typed:
            sp.add_argument("--debug", action="store_true", help="show tracebacks on errors")
            __import__(module, fromlist=["add_arguments"]).add_arguments(sp)
    try:
        plugin_cmds = cli.plugin_commands()
    except Exception:  # noqa: BLE001 (a broken plugin registry: the built-in commands still complete)
        plugin_cmds = {}
    for name, c in plugin_cmds.items():
        sp = sub.add_parser(name, help=c.help or "plugin command")
        if name == typed:
            try:
                c.resolve().add_arguments(sp)
            except Exception:  # noqa: BLE001 (a plugin that cannot be imported completes its name only)
                pass
    return p


def program_parser(prog: str) -> argparse.ArgumentParser:
    """The parser a program runs with."""
    if prog == "studio":
        return studio_parser()
    if prog == "multimodal-export":
        from studio.cli.main import build_command_parser

        return build_command_parser("export", prog="multimodal-export", translate=False)[0]
    if prog == "multimodal-serve":
        from studio.cli.triton_cmd import serve_alias_parser

        return serve_alias_parser()
    if prog == "studio-agent":  # the agent marks its own board flag (studio.agent.cli.completion_parser)
        from studio.agent.cli import completion_parser

        return completion_parser()
    raise ValueError(f"no completion for {prog!r}; programs: {', '.join(PROGRAMS)}")


def complete_and_exit(prog: str, parser_factory: Callable[[], argparse.ArgumentParser] | None = None) -> None:
    """Answer the shell's completion request for ``prog`` and exit; return at once when none was made.

    Without argcomplete (a broken install) the process exits 1 and the shell falls back to file names."""
    from studio.core.completion import answer_and_exit, requested

    if not requested():
        return
    answer_and_exit(parser_factory() if parser_factory is not None else program_parser(prog))


def script(shell: str) -> str:
    """The completion script of all four programs for ``shell``: sourced by bash, or an fpath file for zsh
    (it starts with ``#compdef``); the same text also works when eval'ed in zsh."""
    if shell not in SHELLS:
        from studio.core.errors import InputError

        raise InputError(f"no completion script for shell '{shell}'", offending=shell,
                         hint=f"choose one of: {', '.join(SHELLS)}")
    from studio.core.errors import DependencyMissing

    try:
        import argcomplete
    except ImportError as exc:
        raise DependencyMissing("shell completion needs the Python package 'argcomplete', which is not installed",
                                offending="argcomplete", hint="reinstall deployment-studio (it depends on "
                                "argcomplete): python3 -m pip install --force-reinstall deployment-studio") from exc
    head = ("# Deployment Studio: completion for " + ", ".join(PROGRAMS) + f" ({shell}).\n"
            "# Written by `studio completion " + shell + "`; candidates come from the commands themselves.\n")
    body = argcomplete.shellcode(list(PROGRAMS), shell=shell)
    if shell == "zsh":  # compinit reads the first line of an fpath file for its #compdef tag
        first, _, rest = body.partition("\n")
        return f"{first}\n{head}{rest}"
    return head + body

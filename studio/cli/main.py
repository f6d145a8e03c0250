"""Entry point of `studio`: a table of subcommands, each in its own module imported on demand.

Start-up cost matters (`studio --version` must stay well under 0.3 s), so nothing heavy is imported
here: each subcommand module builds its own parser and imports its core package lazily.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from studio.cli.translate import translate_parser
from studio.core.catalogue import _

# the command table and the entry-point guard sit in core: the GUI lists plugin commands and runs guarded too
from studio.core.commands import COMMANDS, plugin_commands
from studio.core.commands import available as _available
from studio.core.entry import guarded

if TYPE_CHECKING:
    from studio.core.plugins import Contribution

__all__ = ["COMMANDS", "build_command_parser", "guarded", "main", "plugin_commands", "run_command",
           "translate_parser"]

def _plugin_help(c: Contribution) -> str:
    state, reason = c.state()
    extra = "" if state in ("available", "loaded") else f" ({state}: {reason})"
    return f"{c.help or 'plugin command'} [plugin {c.plugin.name}]{extra}"


def _top_parser() -> argparse.ArgumentParser:
    from studio import __version__

    p = argparse.ArgumentParser(prog="studio", description="Deployment Studio: HF multimodal models to ONNX, "
                                "accelerators, Triton and edge boards.")
    p.add_argument("--version", action="version", version=f"studio {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_mod, help_) in COMMANDS.items():
        if _available(name):
            sub.add_parser(name, help=help_, add_help=False)
    translate_parser(p)  # before the plugins: their help is their own
    for name, c in plugin_commands().items():
        sub.add_parser(name, help=_plugin_help(c), add_help=False)
    return p


def build_command_parser(name: str, prog: str | None = None,
                         translate: bool = True) -> tuple[argparse.ArgumentParser, object]:
    """The full parser of command ``name``; its help in the user's language unless ``translate`` is False
    (shell completion)."""
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=prog or f"studio {name}", description=COMMANDS[name][1])
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    module.add_arguments(parser)
    return (translate_parser(parser) if translate else parser), module


def run_command(name: str, argv: Sequence[str], prog: str | None = None, debug: bool = False) -> int:
    parser, module = build_command_parser(name, prog)
    args = parser.parse_args(list(argv))
    args.debug = debug or args.debug
    return guarded(lambda: module.run(args), debug=args.debug)


def run_plugin_command(c: Contribution, argv: Sequence[str], debug: bool = False) -> int:
    """Import the plugin's command only now, build its parser and run it; a failure is printed, not raised."""
    from studio.core.errors import PluginError, StudioError

    def go() -> int:
        command = c.resolve()  # PluginError (printed by guarded) when the plugin cannot be imported
        try:
            parser = argparse.ArgumentParser(prog=f"studio {c.name}", description=c.help or None)
            parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
            command.add_arguments(parser)
            args = parser.parse_args(list(argv))
            args.debug = debug or args.debug
            return command.run(args)
        except (StudioError, KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a plugin's bug is reported as its own, not as a studio crash
            raise PluginError(f"command '{c.name}' of plugin '{c.plugin.name}' failed: {type(exc).__name__}: "
                              f"{exc}", offending=c.module or c.plugin.name,
                              hint="rerun with --debug for the traceback; report it to the plugin's authors") from exc

    return guarded(go, debug=debug or "--debug" in argv)


def main(argv: Sequence[str] | None = None) -> int:
    if "_ARGCOMPLETE" in os.environ:  # a shell's Tab (studio.cli.completion): answer and exit
        from studio.cli.completion import complete_and_exit

        complete_and_exit("studio")
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[:1]
    if debug:
        argv = argv[1:]
    if argv and not argv[0].startswith("-"):
        name = argv[0]
        if name not in COMMANDS:
            plugin_cmd = plugin_commands().get(name)
            if plugin_cmd is not None:
                return run_plugin_command(plugin_cmd, argv[1:], debug=debug or bool(os.environ.get("STUDIO_DEBUG")))
        if name not in COMMANDS or not _available(name):
            print(_("error: unknown command '{name}'").format(name=name) + "\n"
                  + _("  hint: run `studio --help` for the list"), file=sys.stderr)
            return 2
        return run_command(name, argv[1:], debug=debug or bool(os.environ.get("STUDIO_DEBUG")))
    parser = _top_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

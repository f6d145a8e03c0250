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

if TYPE_CHECKING:
    from studio.core.plugins import Contribution

# name -> (module, one-line help). Subcommand modules expose ``add_arguments(parser)`` and ``run(args)``.
COMMANDS: dict[str, tuple[str, str]] = {
    "export": ("studio.cli.export_cmd", "export a HuggingFace model to validated ONNX"),
    "sample-model": ("studio.cli.sample_cmd", "write a tiny random-weight sample model (no network)"),
    "generate": ("studio.cli.generate_cmd", "generate text from an exported decoder (KV cache, ONNX Runtime)"),
    "inspect": ("studio.cli.inspect_cmd", "check an ONNX model against accelerator targets"),
    "targets": ("studio.cli.targets_cmd", "list target profiles"),
    "schema": ("studio.cli.schema_cmd", "print the JSON Schema of target, board or SLA tier files"),
    "fix": ("studio.cli.fix_cmd", "make dims static, simplify, convert precision"),
    "triton": ("studio.cli.triton_cmd", "build, check and serve Triton model repositories"),
    "keys": ("studio.cli.keys_cmd", "manage Ed25519 signing keys"),
    "package": ("studio.cli.package_cmd", "build a signed edge bundle for a board"),
    "verify": ("studio.cli.verify_cmd", "verify a signed edge bundle offline"),
    "deploy": ("studio.cli.deploy_cmd", "deploy a bundle to an edge agent"),
    "agent": ("studio.cli.agent_cmd", "query or roll back an edge agent"),
    "fleet": ("studio.cli.fleet_cmd", "fleets of edge agents: staged rollouts gated by an SLA tier"),
    "bench": ("studio.cli.bench_cmd", "drive load against a KServe v2 server and judge SLAs"),
    "report": ("studio.cli.report_cmd", "render a telemetry recording"),
    "compile": ("studio.cli.compile_cmd", "compile ONNX with TVM Relax for an edge target"),
    "optimize": ("studio.cli.optimize_cmd", "search fixes and precisions for a target: the variant its own tool "
                                            "builds within an accuracy budget"),
    "profile": ("studio.cli.profile_cmd", "per-operator profile of an ONNX model"),
    "diff": ("studio.cli.diff_cmd", "diff two ONNX models: added, removed and changed nodes"),
    "plugins": ("studio.cli.plugins_cmd", "list plugins and their state"),
    "workspace": ("studio.cli.workspace_cmd", "create or show a workspace"),
    "gui": ("studio.cli.gui_cmd", "open the studio window"),
    "completion": ("studio.cli.completion_cmd", "print or install shell completion (bash, zsh)"),
}


def _available(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(COMMANDS[name][0]) is not None
    except ModuleNotFoundError:
        return False


def plugin_commands() -> dict[str, Contribution]:
    """Commands contributed by plugins (manifest ``provides.cli``), without importing them.

    A plugin command whose name is a built-in one is refused (recorded as its error) unless it is that
    built-in command itself (a built-in plugin declaring its own command through the same manifest)."""
    from studio.core.plugins import discover

    out: dict[str, Contribution] = {}
    for plugin in discover():
        if not plugin.ok:
            continue
        for c in plugin.contributions:
            if c.kind != "cli" or c.error is not None:
                continue
            if c.name in COMMANDS:
                if c.module != COMMANDS[c.name][0]:
                    c.fail(f"'{c.name}' is a built-in command of studio; the plugin must use another name")
                continue
            out[c.name] = c
    return out


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
    for name, c in plugin_commands().items():
        sub.add_parser(name, help=_plugin_help(c), add_help=False)
    return p


def build_command_parser(name: str, prog: str | None = None) -> tuple[argparse.ArgumentParser, object]:
    module = importlib.import_module(COMMANDS[name][0])
    parser = argparse.ArgumentParser(prog=prog or f"studio {name}", description=COMMANDS[name][1])
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    module.add_arguments(parser)
    return parser, module


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


def guarded(fn, debug: bool = False) -> int:  # type: ignore[no-untyped-def]
    """Run ``fn``; print StudioErrors without a traceback (unless --debug) and return an exit code."""
    from studio.cli.notices import studio_warnings_to_stderr
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
            print(f"error: unknown command '{name}'\n  hint: run `studio --help` for the list", file=sys.stderr)
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

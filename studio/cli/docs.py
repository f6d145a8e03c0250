"""The CLI reference page of the docs site, written from the very parsers the commands run with.

`make docs` (through the MkDocs hook in ``tools/mkdocs_hooks.py``) and ``python -m studio.cli.docs [OUT.md]``
call :func:`cli_reference`, so the reference never drifts from ``--help``: every program (``studio`` and each of
its ``COMMANDS``, ``multimodal-export``, ``multimodal-serve``, ``studio-agent``), every nested subcommand and every
flag. Plugin commands are left out (they depend on what is installed). Builds parsers only: no torch, no Qt.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PROGRAMS = ("studio", "multimodal-export", "multimodal-serve", "studio-agent")
WIDTH = 100  # usage lines wrap here


@dataclass
class Command:
    """One parser in the tree: its full name (``studio triton build-repo``), parser and sub-commands."""

    name: str
    parser: argparse.ArgumentParser
    help: str = ""
    children: list[Command] = field(default_factory=list)

    def walk(self) -> Iterator[Command]:
        yield self
        for c in self.children:
            yield from c.walk()


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _tree(name: str, parser: argparse.ArgumentParser, help_: str = "") -> Command:
    node = Command(name, parser, help_ or parser.description or "")
    sub = _subparsers(parser)
    if sub is not None:
        helps = {a.dest: a.help or "" for a in sub._choices_actions}
        seen: set[int] = set()
        for child_name, child in sub.choices.items():
            if id(child) in seen:  # an alias of a subcommand already listed
                continue
            seen.add(id(child))
            node.children.append(_tree(f"{name} {child_name}", child, helps.get(child_name, "")))
    return node


def studio_tree() -> Command:
    """`studio` with every built-in command's full parser (as ``studio.cli.main.build_command_parser`` makes it)."""
    from studio.cli import main as cli

    top = _bare_top_parser()
    root = Command("studio", top, top.description or "")  # children: the full parsers, not the usage stubs
    for name, (_module, help_) in cli.COMMANDS.items():
        if not cli._available(name):
            continue
        parser, _mod = cli.build_command_parser(name, translate=False)  # the docs are English
        root.children.append(_tree(f"studio {name}", parser, help_))
    return root


def _bare_top_parser() -> argparse.ArgumentParser:
    """`studio`'s own flags (the top parser less the plugin commands, which depend on what is installed)."""
    from studio import __version__

    p = argparse.ArgumentParser(prog="studio", description="Deployment Studio: HF multimodal models to ONNX, "
                                "accelerators, Triton and edge boards.")
    p.add_argument("--version", action="version", version=f"studio {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")  # for the usage line; the tree lists the commands
    from studio.cli import main as cli

    for name, (_module, help_) in cli.COMMANDS.items():
        if cli._available(name):
            sub.add_parser(name, help=help_, add_help=False)
    return p


def program_trees() -> list[Command]:
    """The four programs' trees, in the order of :data:`PROGRAMS`."""
    from studio.agent.cli import build_parser as agent_parser
    from studio.cli.main import build_command_parser
    from studio.cli.triton_cmd import serve_alias_parser

    export = build_command_parser("export", prog="multimodal-export", translate=False)[0]
    return [studio_tree(), _tree("multimodal-export", export), _tree("multimodal-serve", serve_alias_parser()),
            _tree("studio-agent", agent_parser())]


# -------------------------------------------------------------------------------- markdown


def anchor(name: str) -> str:
    """The heading id of a command (set with attr_list): ``studio agent`` -> ``studio_agent``, never the same as
    the program ``studio-agent``'s."""
    return name.lower().replace(" ", "_")


def _cell(text: str, code: bool = False) -> str:
    """One table cell: one line; a pipe escaped, except inside a code span, where the table parser skips it."""
    text = " ".join(text.split())
    if code:
        return text
    for raw, safe in (("|", "\\|"), ("*", "\\*"), ("[", "\\["), ("<", "&lt;")):  # help text is not Markdown
        text = text.replace(raw, safe)
    return text


def _home(text: str) -> str:
    """Defaults computed from this machine's home folder read as ``~`` (the page is the same for every reader)."""
    home = str(Path.home())
    return text.replace(home, "~") if home not in ("", "/") else text


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    """The parser's own formatter at a fixed width (not the terminal's), so the page is the same everywhere."""
    return parser.formatter_class(prog=parser.prog, width=WIDTH)


def _flag_rows(parser: argparse.ArgumentParser) -> list[tuple[str, str]]:
    fmt = _formatter(parser)
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        invocation = fmt._format_action_invocation(action)
        help_ = fmt._expand_help(action) if action.help else ""
        rows.append((invocation, help_))
    return rows


def _usage(parser: argparse.ArgumentParser) -> str:
    fmt = _formatter(parser)
    fmt.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return fmt.format_help().strip()


def command_markdown(cmd: Command, level: int) -> list[str]:
    out = [f"{'#' * level} {cmd.name} {{ #{anchor(cmd.name)} }}", ""]
    if cmd.help:
        out += [_cell(_home(cmd.help[0].upper() + cmd.help[1:])) + ("" if cmd.help.endswith(".") else "."), ""]
    out += ["```text", _home(_usage(cmd.parser)), "```", ""]
    if cmd.children:
        out += ["| subcommand | what it does |", "|---|---|"]
        out += [f"| [`{c.name.rsplit(' ', 1)[-1]}`](#{anchor(c.name)}) | {_cell(c.help)} |" for c in cmd.children]
        out.append("")
    rows = _flag_rows(cmd.parser)
    if rows:
        out += ["| argument | meaning |", "|---|---|"]
        out += [f"| `{_cell(inv, code=True)}` | {_cell(_home(h))} |" for inv, h in rows]
        out.append("")
    if cmd.parser.epilog:  # as argparse prints it
        out += ["```text", _home(cmd.parser.epilog.strip()), "```", ""]
    return out


def cli_reference() -> str:
    """The whole page (Markdown)."""
    trees = program_trees()
    out = ["# CLI reference", "",
           "Generated from the argument parsers by `python -m studio.cli.docs` at every `make docs`: what `--help` "
           "says, for every program, subcommand and flag (commands contributed by plugins are not listed; "
           "`studio --help` shows them). The guide pages say what the commands do and how they fit together.",
           "", "Programs: " + ", ".join(f"[`{t.name}`](#{anchor(t.name)})" for t in trees) + ".", ""]
    for tree in trees:
        for cmd in tree.walk():
            depth = cmd.name.count(" ")
            out += command_markdown(cmd, min(2 + depth, 4))
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m studio.cli.docs", description="write the CLI reference page")
    p.add_argument("out", nargs="?", help="the Markdown file to write (default: stdout)")
    args = p.parse_args(argv)
    from studio.cli.main import guarded

    return guarded(lambda: _write(args.out))


def _write(out: str | None) -> int:
    from studio.core.atomic import write_text_atomic
    from studio.core.errors import InputError

    if out is None:
        sys.stdout.write(cli_reference())
        return 0
    path = Path(out)
    if not path.parent.is_dir():
        raise InputError(f"the folder for the CLI reference does not exist: {path.parent}", offending=str(path.parent),
                         hint="create it first, or write the page somewhere else")
    write_text_atomic(path, cli_reference())
    return 0


if __name__ == "__main__":
    sys.exit(main())

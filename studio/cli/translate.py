"""argparse in the user's language (studio.core.catalogue): descriptions, help texts, group titles, the
``usage:`` prefix and the ``error:`` line of a parse error, with argparse's commonest messages.

Applied to a built parser by :func:`translate_parser` (``studio.cli.main.build_command_parser`` does it), so the
docs generator and shell completion, which build theirs untranslated, stay English. Flags, choices, metavars
and the exit status (2) never change.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

from studio.core.catalogue import _, tr

# argparse's own messages (Python 3.11/3.12 wording) -> the catalogue's template for them
_ARGPARSE_MESSAGES = (
    (re.compile(r"the following arguments are required: (?P<names>.+)"),
     "the following arguments are required: {names}"),
    (re.compile(r"unrecognized arguments: (?P<args>.+)"), "unrecognized arguments: {args}"),
    (re.compile(r"argument (?P<arg>\S+): invalid choice: (?P<value>.+) \(choose from (?P<choices>.+)\)"),
     "argument {arg}: invalid choice: {value} (choose from {choices})"),
    (re.compile(r"argument (?P<arg>\S+): expected one argument"), "argument {arg}: expected one argument"),
    (re.compile(r"argument (?P<arg>\S+): invalid (?P<type>\S+) value: (?P<value>.+)"),
     "argument {arg}: invalid {type} value: {value}"),
)


def translate_message(message: str) -> str:
    """One of argparse's error messages in the user's language; any other as it is."""
    for pattern, template in _ARGPARSE_MESSAGES:
        m = pattern.fullmatch(message)
        if m:
            return tr(template, **m.groupdict())
    return message


def _translated_formatter(parser: argparse.ArgumentParser):  # type: ignore[no-untyped-def]
    plain = parser._get_formatter

    def make() -> argparse.HelpFormatter:
        formatter = plain()
        add_usage = formatter.add_usage

        def usage_in_language(usage, actions, groups, prefix=None):  # type: ignore[no-untyped-def]
            return add_usage(usage, actions, groups, _("usage: ") if prefix is None else prefix)

        formatter.add_usage = usage_in_language  # type: ignore[method-assign]
        return formatter

    return make


def _translated_error(parser: argparse.ArgumentParser):  # type: ignore[no-untyped-def]
    def error(message: str) -> NoReturn:
        parser.print_usage(sys.stderr)
        parser.exit(2, tr("{prog}: error: {message}", prog=parser.prog, message=translate_message(message)) + "\n")

    return error


def translate_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Every description and help text of ``parser`` and its subparsers in the user's language (a text the
    catalogue lacks stays English), and its usage prefix and parse errors too."""
    if parser.description:
        parser.description = _(parser.description)
    if parser.epilog:
        parser.epilog = _(parser.epilog)
    parser._get_formatter = _translated_formatter(parser)  # type: ignore[method-assign]
    parser.error = _translated_error(parser)  # type: ignore[method-assign]
    for action in parser._actions:
        if action.help and action.help is not argparse.SUPPRESS:
            action.help = _(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.help:
                    choice.help = _(choice.help)
            seen: set[int] = set()
            for child in action.choices.values():
                if id(child) not in seen:
                    seen.add(id(child))
                    translate_parser(child)
    for group in parser._action_groups:
        if group.title:
            group.title = _(group.title)
        if group.description:
            group.description = _(group.description)
    return parser


__all__ = ["translate_message", "translate_parser"]

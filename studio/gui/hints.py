"""Hints in the GUI name the control that does it, not the CLI flag.

The core's errors speak CLI (the CLI is one face of the core and prints them as they are). When the GUI shows
a hint, each flag it knows is replaced by the control that sets it; the equivalent-command boxes keep the
flags. A flag with no control here stays as it is, quoted as the command-line spelling. In another language
the hint is the core catalogue's sentence (studio.core.catalogue) and the control's name Qt's translation.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from studio.core.catalogue import _ as core_text

# flag -> the control (page: label) that does the same; the names go through Qt's translator (context "Hints",
# collected by lupdate from the QT_TRANSLATE_NOOP marks) when a hint is shown
CONTROLS: dict[str, str] = {
    "--force": QT_TRANSLATE_NOOP("Hints", "the override box"),
    "--simplify": QT_TRANSLATE_NOOP("Hints", "the Inspector's “Simplify” fix"),
    "--static": QT_TRANSLATE_NOOP("Hints", "the Inspector's “Static dims…” fix"),
    "--fp16": QT_TRANSLATE_NOOP("Hints", "the Inspector's “FP16” fix"),
    "--int8": QT_TRANSLATE_NOOP("Hints", "the Inspector's “INT8” fix"),
    "--shape": QT_TRANSLATE_NOOP("Hints", "the Compile page's “Shapes” field"),
    "--opset": QT_TRANSLATE_NOOP("Hints", "the export wizard's “Opset” (Options step)"),
    "--exporter": QT_TRANSLATE_NOOP("Hints", "the export wizard's “Exporter” (Options step)"),
    "--input-signature": QT_TRANSLATE_NOOP("Hints", "the export wizard's Signature step"),
    "--atol": QT_TRANSLATE_NOOP("Hints", "the export wizard's “Absolute tolerance”"),
    "--rtol": QT_TRANSLATE_NOOP("Hints", "the export wizard's “Relative tolerance”"),
    "--board": QT_TRANSLATE_NOOP("Hints", "the Package page's “Board”"),
    "--version": QT_TRANSLATE_NOOP("Hints", "the Package page's “Version”"),
    "--key": QT_TRANSLATE_NOOP("Hints", "the Package page's “Signing key”"),
    "--token-file": QT_TRANSLATE_NOOP("Hints", "the agent's token file field (Edge agents)"),
    "--profile-dir": QT_TRANSLATE_NOOP("Hints", "the workspace's targets/ folder"),
    "--out": QT_TRANSLATE_NOOP("Hints", "the “Output” field"),
}
SWITCHES = {"--force", "--simplify", "--fp16", "--int8"}
# where one flag means a different control on a page
BY_PAGE: dict[str, dict[str, str]] = {
    "package": {"--force": QT_TRANSLATE_NOOP("Hints", "“Package even if the board check fails”"),
                "--out": QT_TRANSLATE_NOOP("Hints", "the “Output” field"),
                "--trust": QT_TRANSLATE_NOOP("Hints", "“Public key…” → “Push to agent” (or the agent's trust file)")},
    "compile": {"--force": QT_TRANSLATE_NOOP("Hints", "“Replace an existing output folder”"),
                "--out": QT_TRANSLATE_NOOP("Hints", "the “Output” field")},
    "triton": {"--version": QT_TRANSLATE_NOOP("Hints", "the “Version” field"),
               "--name": QT_TRANSLATE_NOOP("Hints", "the “Name” field")},
    "export": {"--output": QT_TRANSLATE_NOOP("Hints", "the “ONNX file” field (Options step)")},
    "try-it": {"--prompt": QT_TRANSLATE_NOOP("Hints", "the “Prompt” field"),
               "--image": QT_TRANSLATE_NOOP("Hints", "the “Image” field"),
               "--audio": QT_TRANSLATE_NOOP("Hints", "the “Audio” field"),
               "--max-new-tokens": QT_TRANSLATE_NOOP("Hints", "“Max new tokens”"),
               "--prompt-ids": QT_TRANSLATE_NOOP("Hints", "the “Prompt” field")},
}
# a flag and its value: quoted, or up to a space / ; / ) / backtick (a comma ends it only before a space:
# "--shape x=1,3,224,224, then" keeps the shape whole)
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?:[ =](?:\"[^\"]*\"|'[^']*'|(?![-`])(?:[^\s,;)`]|,(?=\S))+))?")
_COMMAND = re.compile(r"`(studio[^`]*)`")
# CJK text and its punctuation: a Chinese sentence spaces a flag ("请用 --board X 重新打包"), not a control name
_WIDE = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\u201c\u201d\u2026"
_UNSPACE = re.compile(f"(?<=[{_WIDE}]) \x01(?=[{_WIDE}])|(?<=[{_WIDE}])\x02 (?=[{_WIDE}])")


def gui_hint(hint: str | None, page: str | None = None, values: bool = True) -> str | None:
    """``hint`` with the flags the GUI has a control for named by that control (commands in backticks kept);
    ``page``: the page showing it, whose own controls win. ``values=False`` (an error message, where the word
    after a flag is the sentence, not its value) replaces the flag alone."""
    if not hint:
        return hint
    hint = core_text(hint)  # the core's sentence in the interface language (its flags kept), then the controls
    controls = {**CONTROLS, **BY_PAGE.get(page or "", {})}
    commands: list[str] = []

    def keep(m: re.Match[str]) -> str:
        commands.append(m.group(0))
        return f"\0{len(commands) - 1}\0"

    text = _COMMAND.sub(keep, hint)

    def swap(m: re.Match[str]) -> str:
        flag = m.group(1)
        if flag not in controls:
            return m.group(0)
        rest = m.group(0)[len(flag):]  # a switch takes no value: what follows it is the sentence
        name = QCoreApplication.translate("Hints", controls[flag])
        return "\x01" + name + "\x02" + (rest if flag in SWITCHES or not values else "")

    text = _FLAG.sub(swap, text)
    text = _UNSPACE.sub("", text).replace("\x01", "").replace("\x02", "")
    return re.sub(r"\0(\d+)\0", lambda m: commands[int(m.group(1))], text)

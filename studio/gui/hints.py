"""Hints in the GUI name the control that does it, not the CLI flag.

The core's errors speak CLI (the CLI is one face of the core and prints them as they are). When the GUI shows
a hint, each flag it knows is replaced by the control that sets it; the equivalent-command boxes keep the
flags. A flag with no control here stays as it is, quoted as the command-line spelling.
"""

from __future__ import annotations

import re

# flag -> the control (page: label) that does the same
CONTROLS: dict[str, str] = {
    "--force": "the override box",
    "--simplify": "the Inspector's \u201cSimplify\u201d fix",
    "--static": "the Inspector's \u201cStatic dims\u2026\u201d fix",
    "--fp16": "the Inspector's \u201cFP16\u201d fix",
    "--int8": "the Inspector's \u201cINT8\u201d fix",
    "--shape": "the Compile page's \u201cShapes\u201d field",
    "--opset": "the export wizard's \u201cOpset\u201d (Options step)",
    "--exporter": "the export wizard's \u201cExporter\u201d (Options step)",
    "--input-signature": "the export wizard's Signature step",
    "--atol": "the export wizard's \u201cAbsolute tolerance\u201d",
    "--rtol": "the export wizard's \u201cRelative tolerance\u201d",
    "--board": "the Package page's \u201cBoard\u201d",
    "--version": "the Package page's \u201cVersion\u201d",
    "--key": "the Package page's \u201cSigning key\u201d",
    "--token-file": "the agent's token file field (Edge agents)",
    "--profile-dir": "the workspace's targets/ folder",
    "--out": "the \u201cOutput\u201d field",
}
SWITCHES = {"--force", "--simplify", "--fp16", "--int8"}
# where one flag means a different control on a page
BY_PAGE: dict[str, dict[str, str]] = {
    "package": {"--force": "\u201cPackage even if the board check fails\u201d", "--out": "the \u201cOutput\u201d field",
                "--trust": "\u201cPublic key\u2026\u201d \u2192 \u201cPush to agent\u201d (or the agent's trust file)"},
    "compile": {"--force": "\u201cReplace an existing output folder\u201d", "--out": "the \u201cOutput\u201d field"},
    "triton": {"--version": "the \u201cVersion\u201d field", "--name": "the \u201cName\u201d field"},
    "export": {"--output": "the \u201cONNX file\u201d field (Options step)"},
    "try-it": {"--prompt": "the \u201cPrompt\u201d field", "--image": "the \u201cImage\u201d field",
               "--audio": "the \u201cAudio\u201d field", "--max-new-tokens": "\u201cMax new tokens\u201d",
               "--prompt-ids": "the \u201cPrompt\u201d field"},
}
# a flag and its value: quoted, or up to a space / ; / ) / backtick (a comma ends it only before a space:
# "--shape x=1,3,224,224, then" keeps the shape whole)
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)(?:[ =](?:\"[^\"]*\"|'[^']*'|(?![-`])(?:[^\s,;)`]|,(?=\S))+))?")
_COMMAND = re.compile(r"`(studio[^`]*)`")


def gui_hint(hint: str | None, page: str | None = None, values: bool = True) -> str | None:
    """``hint`` with the flags the GUI has a control for named by that control (commands in backticks kept);
    ``page``: the page showing it, whose own controls win. ``values=False`` (an error message, where the word
    after a flag is the sentence, not its value) replaces the flag alone."""
    if not hint:
        return hint
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
        return controls[flag] + (rest if flag in SWITCHES or not values else "")

    text = _FLAG.sub(swap, text)
    return re.sub(r"\0(\d+)\0", lambda m: commands[int(m.group(1))], text)

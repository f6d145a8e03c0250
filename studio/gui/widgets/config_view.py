"""Read-only config.pbtxt viewer that can point at a field: a check finding's ``input[0].dims[1]`` -> its line.

The text is what Triton's protobuf printer wrote (studio.triton.config.to_text), one field per line, so a
field path is found by walking the nesting of ``name {`` ... ``}`` blocks and counting repeated names.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from studio.gui.theme import colors, set_role

_BLOCK = re.compile(r"^([A-Za-z_]\w*)\s*:?\s*\{$")
_SCALAR = re.compile(r"^([A-Za-z_]\w*)\s*:\s*(.*)$")


def field_tokens(field: str) -> list[str]:
    """``ensemble_scheduling.step[1].input_map[x]`` -> ``[ensemble_scheduling, step, 1, input_map, x]``."""
    return [t.strip() for t in re.findall(r"[^.\[\]]+", field) if t.strip()]


def line_paths(text: str) -> list[tuple[int, list[str]]]:
    """(line number, field path tokens) for every field line; map entries are named by their key."""
    out: list[tuple[int, list[str]]] = []
    stack: list[tuple[list[str], int]] = []  # ([name, index-or-key], index into out of the header line)
    counts: list[dict[str, int]] = [{}]
    for no, raw in enumerate(text.splitlines()):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if s == "}":
            if stack:
                stack.pop()
                counts.pop()
            continue
        m = _BLOCK.match(s)
        if m:
            name = m.group(1)
            n = counts[-1].get(name, 0)
            counts[-1][name] = n + 1
            out.append((no, [t for part, _ in stack for t in part] + [name, str(n)]))
            stack.append(([name, str(n)], len(out) - 1))
            counts.append({})
            continue
        m = _SCALAR.match(s)
        if not m:
            continue
        name, value = m.group(1), m.group(2)
        if name == "key" and stack and not counts[-1]:  # first line of a map entry: name the entry by its key
            part, header = stack[-1]
            part[1] = value.strip().strip('"')
            prefix = [t for p, _ in stack for t in p]
            out[header] = (out[header][0], prefix)
        n = counts[-1].get(name, 0)
        counts[-1][name] = n + 1
        out.append((no, [t for part, _ in stack for t in part] + [name, str(n)]))
    return out


def _score(want: list[str], have: list[str]) -> tuple[int, int]:
    """(field tokens matched, -unmatched line tokens); an implicit index 0 in the line is skipped."""
    i = j = 0
    while i < len(want) and j < len(have):
        if want[i] == have[j]:
            i += 1
            j += 1
        elif have[j] == "0" and not want[i].isdigit():
            j += 1
        else:
            break
    return i, -(len(have) - j)


def find_field_line(text: str, field: str) -> int | None:
    """The line that best holds ``field`` (a finding's field path), or None when no line names it."""
    want = field_tokens(field)
    if not want:
        return None
    best: tuple[tuple[int, int], int] | None = None
    for no, have in line_paths(text):
        score = _score(want, have)
        if score[0] == 0:
            continue
        if best is None or score > best[0]:
            best = (score, no)
    return best[1] if best is not None else None


class ConfigView(QPlainTextEdit):
    """Monospace, read-only; ``highlight_field`` marks and scrolls to a field's line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        set_role(self, "log")
        self.path: str = ""
        self.highlighted_line: int | None = None

    def show_text(self, text: str, path: str = "") -> None:
        self.path = path
        self.highlighted_line = None
        self.setExtraSelections([])
        self.setPlainText(text)

    def highlight_line(self, line: int, severity: str = "error") -> None:
        block = self.document().findBlockByNumber(line)
        if not block.isValid():
            return
        c = colors()
        tint = QColor(c["fail"] if severity == "error" else c["warn"] if severity == "warning" else c["highlight"])
        tint.setAlpha(55)
        sel = QTextEdit.ExtraSelection()
        sel.format.setBackground(tint)
        sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        cursor = QTextCursor(block)
        sel.cursor = cursor
        self.setExtraSelections([sel])
        self.setTextCursor(cursor)
        self.centerCursor()
        self.highlighted_line = line

    def highlight_field(self, field: str, severity: str = "error") -> int | None:
        """Mark the line of ``field``; returns its number (None when the config does not name it)."""
        line = find_field_line(self.toPlainText(), field)
        if line is None:
            self.setExtraSelections([])
            self.highlighted_line = None
            return None
        self.highlight_line(line, severity)
        return line

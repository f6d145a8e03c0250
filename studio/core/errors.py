"""One error hierarchy that speaks to the user: a message, the offending thing and a hint.

The CLI prints these without a traceback and exits non-zero; the GUI shows them in place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


def _english(text: str) -> str:
    return text


# render()'s translator: studio.core.catalogue installs its gettext here when imported (set_translator), not
# imported from here, since the catalogue reads the settings, whose modules import this one.
_translate: Callable[[str], str] = _english


def set_translator(fn: Callable[[str], str] | None) -> None:
    """Render errors through ``fn`` (None: English again)."""
    global _translate
    _translate = fn or _english


class StudioError(Exception):
    """Base of every error the studio reports to a user.

    ``offending`` names the file, node, field or argument at fault; ``hint`` says what to do about it.
    """

    exit_code: int = 2
    kind: str = "error"

    def __init_subclass__(cls, kind: str | None = None, **kw: Any) -> None:
        """``class ModelError(StudioError, kind="model")``: the kind a subclass reports in ``to_dict``."""
        super().__init_subclass__(**kw)
        if kind is not None:
            cls.kind = kind

    def __init__(self, message: str, *, offending: str | None = None, hint: str | None = None,
                 details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offending = offending
        self.hint = hint
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "error": type(self).__name__, "message": self.message,
                "offending": self.offending, "hint": self.hint, "details": self.details}

    def render(self) -> str:
        """The text a person reads: message, offending thing, hint; the frame (and a message the catalogue
        holds) in the user's language once studio.core.catalogue is imported (the CLI imports it at start);
        ``to_dict`` and ``str`` stay English."""
        return self._frame(_translate)

    def _frame(self, t: Callable[[str], str]) -> str:
        lines = [t("error: {message}").format(message=t(self.message))]
        if self.offending:
            lines.append(t("  at: {offending}").format(offending=self.offending))
        if self.hint:
            lines.append(t("  hint: {hint}").format(hint=t(self.hint)))
        return "\n".join(lines)

    def __str__(self) -> str:  # keeps tracebacks readable too (English: logs and tracebacks are not localized)
        return self._frame(str).removeprefix("error: ")


class InputError(StudioError, kind="input"):
    """The user gave us something we cannot use (missing path, bad flag value, unknown name)."""


class ModelError(StudioError, kind="model"):
    """A model file or directory is unreadable, corrupt or not what it claims to be."""


class ExportError(StudioError, kind="export"):
    """An export stage failed; ``details`` carries the diagnosis."""


class ValidationError(StudioError, kind="validation"):
    """A produced artifact failed its checks (parity, checker, repository check)."""


class TargetError(StudioError, kind="target"):
    """A target or board profile is missing or malformed."""


class InstallError(StudioError, kind="install"):
    """The installation itself is incomplete: package data (targets, boards, SLA tiers, themes) is missing."""


class ConnectionFailed(StudioError, kind="connection"):
    """A server or agent could not be reached within the allotted time."""


class BundleError(StudioError, kind="bundle"):
    """A bundle is malformed, tampered with or not trusted."""


class StorageError(StudioError, kind="storage"):
    """No room to write: a full disk, a quota, or a per-process file-size limit (ENOSPC, EDQUOT, EFBIG)."""


class PluginError(StudioError, kind="plugin"):
    """A plugin failed to import or declared something invalid."""


class DependencyMissing(StudioError, kind="dependency"):
    """An optional dependency (torch, PySide6, apache-tvm, ...) is not installed."""

    @classmethod
    def for_module(cls, module: str, extra: str, purpose: str) -> DependencyMissing:
        return cls(f"{purpose} needs the Python package '{module}', which is not installed",
                   offending=module,
                   hint=f"install it with: python3 -m pip install 'deployment-studio[{extra}]'")


class JobCancelled(StudioError, kind="cancelled"):
    """Raised inside a job when its cancel was requested; not a failure."""

    exit_code = 130

    def __init__(self, message: str = "cancelled by user", **kw: Any) -> None:
        super().__init__(message, **kw)


class StudioDeprecationWarning(DeprecationWarning):
    """An old spelling the studio still accepts (``--shape NAME:1,64``); the message says what to write instead.

    The CLI prints each one once to stderr as ``warning: ...`` (studio.core.entry); the GUI shows it in place."""


@dataclass
class Problem:
    """One finding shown in the Problems list; clicking it opens ``page`` at ``location``."""

    severity: str  # "error" | "warning" | "info"
    message: str
    source: str  # which job / page produced it
    page: str | None = None
    location: str | None = None  # node, field or file
    hint: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

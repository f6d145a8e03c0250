"""One error hierarchy that speaks to the user: a message, the offending thing and a hint.

The CLI prints these without a traceback and exits non-zero; the GUI shows them in place.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


class StudioError(Exception):
    """Base of every error the studio reports to a user.

    ``offending`` names the file, node, field or argument at fault; ``hint`` says what to do about it.
    """

    exit_code: int = 2
    kind: str = "error"

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
        """The text a person reads: message, offending thing, hint."""
        lines = [f"error: {self.message}"]
        if self.offending:
            lines.append(f"  at: {self.offending}")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:  # keeps tracebacks readable too
        return self.render().removeprefix("error: ")


class InputError(StudioError):
    """The user gave us something we cannot use (missing path, bad flag value, unknown name)."""

    kind = "input"


class ModelError(StudioError):
    """A model file or directory is unreadable, corrupt or not what it claims to be."""

    kind = "model"


class ExportError(StudioError):
    """An export stage failed; ``details`` carries the diagnosis."""

    kind = "export"


class ValidationError(StudioError):
    """A produced artifact failed its checks (parity, checker, repository check)."""

    kind = "validation"


class TargetError(StudioError):
    """A target or board profile is missing or malformed."""

    kind = "target"


class InstallError(StudioError):
    """The installation itself is incomplete: package data (targets, boards, SLA tiers, themes) is missing."""

    kind = "install"


class ConnectionFailed(StudioError):
    """A server or agent could not be reached within the allotted time."""

    kind = "connection"


class BundleError(StudioError):
    """A bundle is malformed, tampered with or not trusted."""

    kind = "bundle"


class StorageError(StudioError):
    """No room to write: a full disk, a quota, or a per-process file-size limit (ENOSPC, EDQUOT, EFBIG)."""

    kind = "storage"


class PluginError(StudioError):
    """A plugin failed to import or declared something invalid."""

    kind = "plugin"


class DependencyMissing(StudioError):
    """An optional dependency (torch, PySide6, apache-tvm, ...) is not installed."""

    kind = "dependency"

    @classmethod
    def for_module(cls, module: str, extra: str, purpose: str) -> DependencyMissing:
        return cls(f"{purpose} needs the Python package '{module}', which is not installed",
                   offending=module,
                   hint=f"install it with: python3 -m pip install 'deployment-studio[{extra}]'")


class JobCancelled(StudioError):
    """Raised inside a job when its cancel was requested; not a failure."""

    kind = "cancelled"
    exit_code = 130

    def __init__(self, message: str = "cancelled by user", **kw: Any) -> None:
        super().__init__(message, **kw)


class StudioDeprecationWarning(DeprecationWarning):
    """An old spelling the studio still accepts (``--shape NAME:1,64``); the message says what to write instead.

    The CLI prints each one once to stderr as ``warning: ...`` (studio.cli.notices); the GUI shows it in place."""


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

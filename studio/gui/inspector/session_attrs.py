"""The Inspect page's view of its :class:`studio.inspect.session.InspectSession`: read-only attributes.

Why read-only: a widget that wants to change the model, graph, report, selection or last fix calls the
session's setter, so every subscriber hears it; reading ``page.report`` (tests, plugins) keeps working.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.inspect.session import InspectSession


class SessionAttributes:
    session: InspectSession

    @property
    def model_path(self) -> Path | None:
        return self.session.model_path

    @property
    def graph(self) -> Any:
        return self.session.graph

    @property
    def report(self) -> Any:
        return self.session.report

    @property
    def selected_node(self) -> str | None:
        return self.session.selected_node

    @property
    def last_fix(self) -> Any:
        return self.session.last_fix

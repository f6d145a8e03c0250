"""The Qt face of studio.core.state: one QObject that re-emits every state change as a signal.

Pollers change device states on worker threads; a signal emitted there reaches the widgets' slots queued on
the GUI thread (AutoConnection), so no widget is touched off the GUI thread.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from studio.core.state import StudioState


class StateSignals(QObject):
    sig_changed = Signal(str, object)  # topic (studio.core.state.TOPICS), payload

    def __init__(self, state: StudioState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._unsubscribe = state.subscribe("*", self._relay)
        self.destroyed.connect(self._unsubscribe)

    def _relay(self, topic: str, payload: Any) -> None:
        self.sig_changed.emit(topic, payload)

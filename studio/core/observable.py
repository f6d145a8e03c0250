"""Callbacks per topic: the one subscribe / notify mechanism of the studio's observable states (the workspace's
:class:`studio.core.state.StudioState`, the inspector's :class:`studio.inspect.session.InspectSession`).

Callbacks run synchronously on the thread that made the change; a GUI adapter re-emits them as Qt signals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Callback = Callable[[str, Any], None]


class Subscribers:
    def __init__(self, topics: tuple[str, ...], what: str) -> None:
        self.topics, self.what = topics, what
        self._subs: dict[str, list[Callback]] = {t: [] for t in topics}

    def subscribe(self, topic: str, fn: Callback) -> Callable[[], None]:
        """Call ``fn(topic, payload)`` on every change of ``topic`` ("*" for all); returns the unsubscribe."""
        topics = self.topics if topic == "*" else (topic,)
        for t in topics:
            if t not in self._subs:
                raise ValueError(f"unknown {self.what} topic {t!r}; topics: {', '.join(self.topics)}")
            self._subs[t].append(fn)

        def unsubscribe() -> None:
            for t in topics:
                if fn in self._subs[t]:
                    self._subs[t].remove(fn)
        return unsubscribe

    def emit(self, topic: str, payload: Any = None) -> None:
        for fn in list(self._subs[topic]):
            fn(topic, payload)

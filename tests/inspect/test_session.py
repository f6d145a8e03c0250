"""The inspector's Qt-free session (studio.inspect.session): what its subscribers hear, and that it imports where
PySide6 cannot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from studio.inspect.session import TOPICS, InspectSession


def test_subscribers_hear_each_change_once() -> None:
    s = InspectSession()
    heard: list[tuple[str, object]] = []
    unsubscribe = s.subscribe("*", lambda t, v: heard.append((t, v)))
    s.set_graph("g")
    s.set_graph("g")  # the same graph: nothing to say
    s.set_report("r")
    s.set_report("r")  # the same report again: a verifier folded its answer into it, subscribers redraw
    s.select("conv1")
    s.select("conv1")
    s.set_fix("fix")
    s.open(Path("m.onnx"))
    assert heard == [("graph", "g"), ("report", "r"), ("report", "r"), ("selection", "conv1"), ("fix", "fix"),
                     ("model", Path("m.onnx"))]
    assert (s.graph, s.report, s.selected_node) == (None, None, None)  # a new model: its own graph and report
    assert s.last_fix == "fix"  # the fix that wrote the model now open
    unsubscribe()
    s.select("x")
    assert heard[-1][0] == "model"
    with pytest.raises(ValueError, match="topics: " + ", ".join(TOPICS)):
        s.subscribe("colour", lambda t, v: None)


def test_imports_without_qt() -> None:
    code = ("import sys; sys.modules['PySide6'] = None; import studio.inspect.session as m; "
            "assert 'PySide6.QtCore' not in sys.modules; print(m.InspectSession().report)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"

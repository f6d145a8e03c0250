"""GUI hints name the control, not the CLI flag; commands quoted in backticks stay as they are."""

from __future__ import annotations

from studio.gui.hints import gui_hint


def test_flags_become_controls() -> None:
    assert gui_hint("package it again with --board rk3588") == "package it again with the Package page's \u201cBoard\u201d"
    assert gui_hint("--force overrides", page="package") == "\u201cPackage even if the board check fails\u201d overrides"
    assert gui_hint("--force overrides", page="compile") == "\u201cReplace an existing output folder\u201d overrides"
    assert "Static dims" in gui_hint("fix it: studio fix MODEL --static batch=N")
    assert "\u201cShapes\u201d" in gui_hint("check the --shape values against the model's inputs")
    kept = "run `studio inspect m.onnx --target rk3588 --fail-on unsupported` to see why"
    assert gui_hint(kept) == kept  # the equivalent command keeps its flags
    assert gui_hint("pick a free --grpc-port") == "pick a free --grpc-port"  # no control: left as it is
    assert gui_hint(None) is None and gui_hint("") == ""

"""Fixtures for install tests: the wheel (built once per session) and cached per-extra venvs holding it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.install.venvs import WheelVenv, build_wheel, venvs_root, wheel_venv

_TIMES: list[tuple[str, float, float]] = []  # (extra, create seconds, wheel install seconds)
_VENVS: dict[str, WheelVenv] = {}


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    t0 = time.monotonic()
    whl = build_wheel(tmp_path_factory.mktemp("wheel"))
    _TIMES.append(("wheel", -1.0, time.monotonic() - t0))
    return whl


@pytest.fixture(scope="session")
def venv_for(wheel: Path):  # type: ignore[no-untyped-def]
    """``venv_for("agent")``: the cached deps-only venv of that extra with this session's wheel in it."""

    def get(extra: str) -> WheelVenv:
        if extra not in _VENVS:
            v = wheel_venv(extra, wheel)
            _VENVS[extra] = v
            _TIMES.append((extra, v.created_s, v.install_s))
        return _VENVS[extra]

    return get


@pytest.fixture()
def outside(tmp_path: Path) -> Path:
    """A working folder outside the checkout (commands run with it as cwd)."""
    d = tmp_path / "outside"
    d.mkdir()
    return d


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    if not _TIMES:
        return
    tr = terminalreporter
    tr.section(f"install venvs (cache: {venvs_root()})")
    for extra, created, seconds in _TIMES:
        if created < 0:
            tr.write_line(f"{'(wheel)':14} built in {seconds:.1f} s")
            continue
        state = f"created in {created:.0f} s (cold cache)" if created else "cached deps venv"
        tr.write_line(f"{extra:14} {state:32} wheel installed in {seconds:.1f} s")

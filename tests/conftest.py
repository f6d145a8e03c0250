"""Suite-wide fixtures: an isolated config folder so tests never touch the user's settings."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import studio.export  # noqa: F401 - its torchvision hook (studio.export.torchvision_compat), before any test imports transformers

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
# The test running now, rewritten at each start: a run that dies in C (a Qt abort, a segfault) prints only
# the tail of its threads' stacks, so `make test` names the test from this file when pytest does not exit 0/1.
LAST_TEST = ARTIFACTS / "last-test.txt"


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    try:
        ARTIFACTS.mkdir(exist_ok=True)
        LAST_TEST.write_text(nodeid + "\n")
    except OSError:  # a read-only checkout: the trail is a convenience, never a failure
        pass


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUDIO_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    # the GUI in English whatever the developer's locale (tests that check a translation install it themselves)
    monkeypatch.setenv("STUDIO_LANGUAGE", "en")


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Screenshots and other things a person may want to look at after a run."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")



@pytest.fixture(scope="session")
def qapp(qapp):  # type: ignore[no-untyped-def]  # pytest-qt's, with the studio's collector installed on it
    """pytest-qt's QApplication, collecting garbage on the GUI thread only, as the studio does
    (studio.gui.gc_guard): a worker thread collecting a previous test's widgets hung or aborted the run, and one
    deleting them off the GUI thread made Qt warn "Timers cannot be started from another thread" in the next
    test. (A ``pytest_fixture_setup`` hook here never saw this session-scoped fixture: pytest calls that hook
    through the session node, which only sees root-level conftests.)"""
    from studio.gui import gc_guard

    gc_guard.install(qapp)
    return qapp


@pytest.fixture(autouse=True)
def _collect_on_the_gui_thread():  # type: ignore[no-untyped-def]
    """After each test, the collection its garbage would have had, on the main thread (no event loop may run
    between tests, and the collector is off everywhere else once the QApplication exists)."""
    yield
    if "studio.gui.gc_guard" in sys.modules:
        guard = sys.modules["studio.gui.gc_guard"].installed()
        if guard is not None:
            guard.check()


@pytest.fixture
def english_after():  # type: ignore[no-untyped-def]
    """Whatever language a test switches the core catalogue to, the next one starts in English."""
    yield
    from studio.core import catalogue, language

    catalogue.use(language.ENGLISH)

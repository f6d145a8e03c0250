"""Helpers of the studio optimize tests."""

from __future__ import annotations

from pathlib import Path


def run_cli(*argv: str | Path) -> int:
    """``studio ARGV`` in this process (the cache fixture applies)."""
    from studio.cli.main import main

    return main([str(a) for a in argv])

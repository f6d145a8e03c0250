"""`studio gui [--demo [DIR]] [--workspace DIR] [--theme light|dark]`: open the studio window."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    from studio.gui.app import add_arguments as _add

    _add(p)


def run(args: argparse.Namespace) -> int:
    from studio.gui.app import run as _run

    return _run(args)

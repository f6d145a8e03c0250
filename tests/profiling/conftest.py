"""Profiling tests share the hand-built attention graphs and the tiny-clip export helper of tests/optimize."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "optimize"))

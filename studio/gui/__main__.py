"""`python -m studio.gui [--demo DIR] [--workspace DIR]`."""

from __future__ import annotations

import sys

from studio.gui.app import main

if __name__ == "__main__":
    from studio.core.entry import guarded

    sys.exit(guarded(main))

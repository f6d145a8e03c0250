"""Old name of :mod:`studio.edge.verify`, kept because Triton repositories built earlier hold a ``model.py``
that imports ``studio.package.verify.verify_directory``; new code imports ``studio.edge.verify``."""

from __future__ import annotations

from studio.edge.verify import (
    VerifyReport,
    extract_verified,
    load_trusted_keys,
    verify_bundle,
    verify_directory,
)

__all__ = ["VerifyReport", "verify_bundle", "extract_verified", "verify_directory", "load_trusted_keys"]

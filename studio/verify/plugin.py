"""Manifest of the built-in verifiers, registered through the ``studio.plugins`` entry points like any plugin.

Nothing here imports onnxruntime or TVM: ``module`` is imported only when a verifier is used.
"""

from __future__ import annotations


def manifest() -> dict:
    return {"name": "builtin-verifiers",
            "description": "Verifiers that ask the real tool: an ONNX Runtime session (ort-cpu) and TVM Relax's "
                           "from_onnx import (tvm-relax, needs apache-tvm)",
            "provides": {"verifiers": ["ort-cpu", "tvm-relax"]},
            "module": "studio.verify.builtin"}

"""Manifest of the built-in verifiers, registered through the ``studio.plugins`` entry points like any plugin.

Nothing here imports onnxruntime or TVM: ``module`` is imported only when a verifier is used.
"""

from __future__ import annotations


def manifest() -> dict:
    return {"name": "builtin-verifiers",
            "description": "Verifiers that ask the real tool: an ONNX Runtime session (ort-cpu) and TVM Relax's "
                           "from_onnx import (tvm-relax, needs apache-tvm)",
            # target / requires / tool: what `studio inspect` reads to offer --verify without importing them
            "provides": {"verifiers": {"ort-cpu": {"target": "ort-cpu", "requires": ["onnxruntime"],
                                                   "tool": "onnxruntime"},
                                       "tvm-relax": {"target": "tvm-relax", "requires": ["tvm"],
                                                     "tool": "apache-tvm"}},
                         # the target search's judges (studio.tune): the same tools, run on every sample
                         "evaluators": {"ort-cpu": {"target": "ort-cpu", "requires": ["onnxruntime"],
                                                    "module": "studio.tune.builtin_eval", "tool": "onnxruntime"},
                                        "tvm-relax": {"target": "tvm-relax", "requires": ["tvm"],
                                                      "module": "studio.tune.builtin_eval", "tool": "apache-tvm"}}},
            "module": "studio.verify.builtin"}

"""Manifest of the TVM compile plugin: registered through the `studio.plugins` entry-point group.

It declares ``requires: ["tvm"]`` so `studio plugins` and the Plugins view show it unavailable, with the
install hint, when apache-tvm is absent; nothing here imports TVM.
"""

from __future__ import annotations


def manifest() -> dict:
    from studio.compile.targets import BOARDS, GENERIC

    return {"name": "tvm-compile",
            "description": "Compile ONNX with TVM Relax for edge CPUs and GPUs (apache-tvm); LLM parts with "
                           "mlc_llm when installed. Without apache-tvm: python3 -m pip install "
                           "'deployment-studio[compile]'",
            "provides": {"compilers": ["tvm-relax", "mlc-llm"], "targets": list(GENERIC) + list(BOARDS),
                         "runtimes": ["tvm"], "cli": ["compile"]},
            "module": "studio.compile.api",
            "requires": ["tvm"],
            "hint": "install apache-tvm: python3 -m pip install 'deployment-studio[compile]'"}

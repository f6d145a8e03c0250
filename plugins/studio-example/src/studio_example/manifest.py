"""The plugin's manifest: what it contributes, read by the studio without importing anything else here."""

from __future__ import annotations


def manifest() -> dict:
    return {"name": "studio-example",
            "description": "Example plugin: the example-npu target, its verifier, `studio example-hello` and a page",
            "module": "studio_example.plugin",
            "requires": ["onnx"],
            "hint": "python3 -m pip install onnx",
            "provides": {
                "targets": {"example-npu": {"path": "studio_example:targets/example-npu.yaml"}},
                "verifiers": ["example-npu"],
                "cli": {"example-hello": {"help": "say what the example NPU would do with an ONNX model",
                                          "module": "studio_example.cli"}},
                "pages": {"example": {"title": "Example NPU"}},
            }}

"""Manifest of the OpenVINO plugin (entry point group ``studio.plugins``); nothing here imports openvino."""

from __future__ import annotations

OPENVINO_PIN = "openvino==2026.4.1"


def manifest() -> dict:
    return {"name": "studio-openvino",
            "description": "OpenVINO verifier: read_model's conversion errors and Core().query_model(model, 'CPU') "
                           "per node; NPU rows stay from the published list",
            "provides": {"verifiers": ["openvino-cpu"]},
            "module": "studio_openvino.verifier",
            "requires": ["openvino"],
            "hint": f"install OpenVINO: python3 -m pip install {OPENVINO_PIN}"}

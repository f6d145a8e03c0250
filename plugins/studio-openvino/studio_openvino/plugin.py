"""Manifest of the OpenVINO plugin (entry point group ``studio.plugins``); nothing here imports openvino."""

from __future__ import annotations

OPENVINO_PIN = "openvino==2026.4.1"


def manifest() -> dict:
    return {"name": "studio-openvino",
            "description": "OpenVINO verifier: read_model's conversion errors, Core().query_model(model, 'CPU') "
                           "per node and compile_model(model, 'CPU'); NPU rows stay from the published list",
            # target / tool: what `studio inspect` reads to offer --verify without importing the verifier
            "provides": {"verifiers": {"openvino-cpu": {"target": "openvino", "tool": "openvino"}},
                         "evaluators": {"openvino": {"target": "openvino", "tool": "openvino",
                                                     "module": "studio_openvino.evaluate"}}},
            "module": "studio_openvino.verifier",
            "requires": ["openvino"],
            "hint": f"install OpenVINO: python3 -m pip install {OPENVINO_PIN}",
            # its notes and errors in the user's language: locale/<code>/LC_MESSAGES/studio_openvino.po
            "messages": {"domain": "studio_openvino", "locale": "studio_openvino:locale"}}

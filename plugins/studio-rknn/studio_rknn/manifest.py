"""The entry point's manifest (group ``studio.plugins``): declarative, imports nothing heavy."""

from __future__ import annotations

PLATFORMS = ("rk3588", "rk3576", "rk3566")  # rknn-toolkit2 2.5.0 target_platform values the verifier offers


def manifest() -> dict:
    return {"name": "studio-rknn",
            "description": "Rockchip NPU verdicts from the real rknn-toolkit2 2.5.0 build (and its x86 simulator), "
                           "run in the plugin's own environment; create it with: studio-rknn-env create",
            "provides": {"verifiers": [f"rknn-{p}" for p in PLATFORMS]},
            "module": "studio_rknn.plugin",
            "requires": ["onnx"],
            "hint": "the toolkit's environment is checked by the verifier itself: studio-rknn-env check"}

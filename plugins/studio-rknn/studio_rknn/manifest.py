"""The entry point's manifest (group ``studio.plugins``): declarative, imports nothing heavy."""

from __future__ import annotations

PLATFORMS = ("rk3588", "rk3576", "rk3566")  # rknn-toolkit2 2.5.0 target_platform values the verifier offers


def manifest() -> dict:
    return {"name": "studio-rknn",
            "description": "Rockchip NPU verdicts from the real rknn-toolkit2 2.5.0 build (and its x86 simulator), "
                           "run in the plugin's own environment; create it with: studio-rknn-env create",
            # target / status: what `studio inspect` reads to offer --verify without importing the verifier
            "provides": {"verifiers": {f"rknn-{p}": {"target": p, "status": "studio_rknn.env:verifier_status"}
                                       for p in PLATFORMS},
                         "compilers": {"rknn": {"object": "studio_rknn.compile:compile",
                                                "title": "RKNN (rknn-toolkit2)",
                                                "help": "studio compile --target rk3588 --backend rknn: a .rknn "
                                                        "(fp16, or int8), simulator parity against ORT",
                                                "targets": list(PLATFORMS), "precisions": ["", "int8"],
                                                "status": "studio_rknn.compile:toolkit_status"}},
                         "evaluators": {p: {"target": p, "module": "studio_rknn.evaluate", "tool": "rknn-toolkit2",
                                            "help": "studio optimize: build + x86 simulator on every sample"}
                                        for p in PLATFORMS},
                         "runtimes": {"rknn": {"object": "studio_rknn.runtime:load_rknn_model",
                                               "help": "the edge agent serves .rknn bundles (rknn-toolkit-lite2 "
                                                       "on a board, the toolkit's simulator on x86)"}}},
            "module": "studio_rknn.plugin",
            "requires": ["onnx"],
            "hint": "the toolkit's environment is checked by the verifier itself: studio-rknn-env check",
            # its messages (job lines, errors, hints) in the user's language: locale/<code>/LC_MESSAGES/studio_rknn.po,
            # a fallback of the studio's catalogue (studio.core.catalogue); the core never lists the plugin's strings
            "messages": {"domain": "studio_rknn", "locale": "studio_rknn:locale"}}

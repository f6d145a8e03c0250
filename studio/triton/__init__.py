"""Triton: model repository builder and checker, local CPU server, client facade and runner.

Nothing here imports Qt or torch. Heavy modules (tritonclient, onnxruntime) load on first use.
"""

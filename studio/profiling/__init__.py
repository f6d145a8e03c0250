"""Per-op profiling: ONNX Runtime's profiler per node, PyTorch per-module times mapped onto the ONNX nodes.

No torch at import time: ``studio.profiling.torch_modules`` is the one module that drives torch, imported
only when an HF model is profiled.
"""

"""Deployment Studio: HF multimodal models to ONNX, accelerators, Triton and edge boards."""

__version__ = "0.1.0"

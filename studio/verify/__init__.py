"""Verdicts from the real toolchains (ONNX Runtime, TVM, OpenVINO, rknn-toolkit2), beside the static profiles."""

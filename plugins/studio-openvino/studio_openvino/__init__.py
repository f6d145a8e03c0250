"""Deployment Studio plugin: asks OpenVINO itself which ONNX nodes it converts and runs on the CPU."""

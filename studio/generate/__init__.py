"""Text generation from an exported decoder with a KV cache: ONNX Runtime only (no torch, no Qt) at run time.

``config`` reads and writes the cache layout beside the model (``generation.json``, and ``genai_config.json``
for onnxruntime-genai); ``runtime`` is the greedy / sampling loop on ONNX Runtime with IO binding and a
preallocated cache; ``api.generate`` is the one call the CLI, tests and (later) the agent use.
"""

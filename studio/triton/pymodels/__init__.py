"""Python-backend model files the builder copies verbatim as ``model.py``.

Each is self-contained (Triton's stub runs the system interpreter and cannot import the studio): it reads
``studio_env.json`` beside config.pbtxt to find the site-packages holding numpy / onnxruntime / tokenizers,
and imports ``triton_python_backend_utils`` only inside the stub.
"""

from pathlib import Path

ONNX_MODEL = Path(__file__).with_name("onnx_model.py")
TOKENIZER_MODEL = Path(__file__).with_name("tokenizer_model.py")
ROUTER_MODEL = Path(__file__).with_name("router_model.py")
GENERATE_MODEL = Path(__file__).with_name("generate_model.py")  # decoupled; imports the studio (see its docstring)

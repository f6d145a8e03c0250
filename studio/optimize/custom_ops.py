"""The studio's custom-op domain ``studio.fused`` and how ONNX Runtime loads it.

``studio.fused::FusedAttention`` (version 1) is scaled dot-product attention in one node:

    inputs   query [B, H, Sq, Dh]; key [B, H, Skv, Dh] (key_format "BHSd") or [B, Skv, H, Dh] ("BSHd")
             or already transposed [B, H, Dh, Skv] ("BHdS"); value [B, H, Skv, Dv]; optional additive mask
             broadcastable to [B, H, Sq, Skv]
    output   [B, H, Sq, Dv] = softmax(scale * query @ key^T + mask) @ value
    attrs    num_heads (int, 0 = not known statically; checked against H when set), scale (float),
             key_format (string), nan_to_zero (int: fully masked rows give 0, not NaN, as the exporter's
             Where(IsNaN) guard does)

Two ways to run it in ONNX Runtime:
- development: onnxruntime-extensions' Python custom ops. Those live in the extensions' fixed domain
  (``ai.onnx.contrib``, ``default_opset_domain()``), so ``make_session`` registers the extensions library
  and hands ORT an in-memory copy whose ``studio.fused`` nodes are renamed into that domain. The file on
  disk keeps ``studio.fused``: that is what the inspector and the deployment targets see.
- deployment: a custom-op shared library that implements ``studio.fused::FusedAttention`` natively
  (``custom_op_lib=``, ``--custom-op-lib``); it is registered with ``SessionOptions.register_custom_ops_library``
  and the model is loaded unchanged.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import DependencyMissing, InputError, ModelError

DOMAIN = "studio.fused"
DOMAIN_VERSION = 1
FUSED_ATTENTION = "FusedAttention"
KEY_FORMATS = ("BHSd", "BSHd", "BHdS")
# Python-op names inside onnxruntime-extensions' domain: one per input count (a Python op has a fixed arity).
_PYOP_NAMES = {3: "StudioFusedAttention", 4: "StudioFusedAttentionMasked"}

_registered = False
_lock = threading.Lock()


def fused_attention(query: np.ndarray, key: np.ndarray, value: np.ndarray, mask: np.ndarray | None = None, *,
                    scale: float, key_format: str = "BHSd", num_heads: int = 0,
                    nan_to_zero: int = 0) -> np.ndarray:
    """Reference implementation (numpy, float32); the Python custom op runs exactly this."""
    q = np.asarray(query, dtype=np.float32)
    k = np.asarray(key, dtype=np.float32)
    if key_format == "BHSd":
        kt = np.swapaxes(k, -1, -2)
    elif key_format == "BSHd":
        if k.ndim != 4:
            raise ValueError(f"FusedAttention: key_format BSHd needs a rank-4 key, got rank {k.ndim}")
        kt = k.transpose(0, 2, 3, 1)
    elif key_format == "BHdS":
        kt = k
    else:
        raise ValueError(f"FusedAttention: unknown key_format {key_format!r} (one of {', '.join(KEY_FORMATS)})")
    if num_heads and q.ndim == 4 and q.shape[1] != num_heads:
        raise ValueError(f"FusedAttention: num_heads={num_heads} but query has {q.shape[1]} heads")
    s = np.matmul(q, kt) * np.float32(scale)
    if mask is not None:
        s = s + np.asarray(mask, dtype=np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        s = s - np.max(s, axis=-1, keepdims=True)
        e = np.exp(s)
        p = e / np.sum(e, axis=-1, keepdims=True)
    if nan_to_zero:
        p = np.where(np.isnan(p), np.float32(0), p)
    return np.matmul(p, np.asarray(value, dtype=np.float32)).astype(np.float32)


_PROTOBUF_KEY = "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION"


def import_extensions() -> Any:
    """``onnxruntime_extensions``, without the environment change its import makes: its offline API (cvt.py)
    sets PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python in ``os.environ``, so every process the studio started
    afterwards parsed protobuf in pure Python (slower; the shape-inference child's answer went missing and a
    fresh process imported numpy with onnx_light). This process's protobuf was chosen at its first import, so
    only the children were changed: the variable is put back as it was."""
    prior = os.environ.get(_PROTOBUF_KEY)
    try:
        import onnxruntime_extensions
    finally:
        if prior is None:
            os.environ.pop(_PROTOBUF_KEY, None)
        else:
            os.environ[_PROTOBUF_KEY] = prior
    return onnxruntime_extensions


def extensions_available() -> bool:
    try:
        import_extensions()
    except Exception:
        return False
    return True


def register_python_ops() -> str:
    """Register the Python implementations with onnxruntime-extensions (once per process); returns the
    extensions library path to register with ORT."""
    global _registered
    try:
        ortx = import_extensions()
        PyCustomOpDef, onnx_op = ortx.PyCustomOpDef, ortx.onnx_op  # noqa: N806 - the package's own names
    except Exception as exc:
        raise DependencyMissing(f"onnxruntime-extensions is needed to run '{DOMAIN}' ops in Python ({exc})",
                                offending="onnxruntime_extensions",
                                hint="pip install 'deployment-studio[optimize]', or pass --custom-op-lib "
                                     "with a native studio.fused library") from None
    with _lock:
        if not _registered:
            f, s, i = PyCustomOpDef.dt_float, PyCustomOpDef.dt_string, PyCustomOpDef.dt_int64
            attrs = {"num_heads": i, "scale": f, "key_format": s, "nan_to_zero": i}

            @onnx_op(op_type=_PYOP_NAMES[3], inputs=[f, f, f], outputs=[f], attrs=attrs)
            def _attn(q: Any, k: Any, v: Any, **kw: Any) -> np.ndarray:
                return fused_attention(q, k, v, None, **kw)

            @onnx_op(op_type=_PYOP_NAMES[4], inputs=[f, f, f, f], outputs=[f], attrs=attrs)
            def _attn_mask(q: Any, k: Any, v: Any, m: Any, **kw: Any) -> np.ndarray:
                return fused_attention(q, k, v, m, **kw)

            _registered = True
    return str(ortx.get_library_path())


def uses_domain(model: Any, domain: str = DOMAIN) -> bool:
    """Whether any node of the model (a ModelProto), subgraphs included, is in ``domain``."""
    def walk(graph: Any) -> bool:
        for n in graph.node:
            if n.domain == domain:
                return True
            for a in n.attribute:
                if a.g.node and walk(a.g):
                    return True
                if any(walk(g) for g in a.graphs):
                    return True
        return False
    return walk(model.graph)


def to_python_op_domain(model: Any) -> Any:
    """Copy of ``model`` with ``studio.fused`` nodes renamed to the extensions' Python ops (ORT-loadable)."""
    import onnx

    contrib = import_extensions().default_opset_domain()
    m = onnx.ModelProto()
    m.CopyFrom(model)

    def walk(graph: Any) -> None:
        for n in graph.node:
            if n.domain == DOMAIN:
                if n.op_type != FUSED_ATTENTION:
                    raise ModelError(f"unknown op {DOMAIN}::{n.op_type} (the Python runtime implements "
                                     f"{FUSED_ATTENTION} only)", offending=n.name or n.op_type,
                                     hint="give a native custom-op library with --custom-op-lib")
                arity = len(n.input)
                while arity and not n.input[arity - 1]:  # trailing optional inputs left empty
                    arity -= 1
                if arity not in _PYOP_NAMES:
                    raise ModelError(f"{FUSED_ATTENTION} takes 3 or 4 inputs, node has {len(n.input)}",
                                     offending=n.name)
                del n.input[arity:]
                n.op_type, n.domain = _PYOP_NAMES[arity], contrib
                have = {a.name for a in n.attribute}
                defaults = {"num_heads": 0, "key_format": "BHSd", "nan_to_zero": 0}
                for k, v in defaults.items():
                    if k not in have:
                        n.attribute.append(onnx.helper.make_attribute(k, v))
                if "scale" not in have:
                    raise ModelError(f"{FUSED_ATTENTION} node has no 'scale' attribute", offending=n.name)
            for a in n.attribute:
                if a.g.node:
                    walk(a.g)
                for g in a.graphs:
                    walk(g)

    walk(m.graph)
    if not any(o.domain == contrib for o in m.opset_import):
        m.opset_import.append(onnx.helper.make_opsetid(contrib, 1))
    return m


def make_session(model: Path | str | Any, *, custom_op_lib: Path | str | None = None,
                 sess_options: Any = None, providers: list[str] | None = None) -> Any:
    """An ``onnxruntime.InferenceSession`` that can run ``studio.fused`` ops (see the module docstring).

    ``model`` is a path or a ModelProto. Models without the domain load as usual (path kept, so external
    weights resolve). Raises ModelError when ORT refuses the model, DependencyMissing without the runtime.
    """
    import onnx

    from studio.core.runner import ort_session, session_options

    so = sess_options or session_options()
    providers = providers or ["CPUExecutionProvider"]
    proto = model if not isinstance(model, (str, Path)) else None
    where = str(model) if proto is None else (proto.graph.name or "model")
    if proto is None:
        path = Path(model)
        if not path.is_file():
            raise InputError(f"model file not found: {path}", offending=str(path), hint="check the path")
        try:
            proto = onnx.load(str(path), load_external_data=False)
        except Exception as exc:
            raise ModelError(f"not a readable ONNX model: {str(exc)[:200]}", offending=str(path)) from None
    fused = uses_domain(proto)
    feed: Any = str(model) if isinstance(model, (str, Path)) else proto.SerializeToString()
    if custom_op_lib is not None:
        lib = Path(custom_op_lib)
        if not lib.is_file():
            raise InputError(f"custom-op library not found: {lib}", offending=str(lib),
                             hint="give the path of a shared library implementing studio.fused ops")
        try:
            so.register_custom_ops_library(str(lib))
        except Exception as exc:
            raise ModelError(f"ONNX Runtime cannot load the custom-op library: {str(exc)[:200]}",
                             offending=str(lib), hint="build it against the installed onnxruntime's C API") from None
    elif fused:
        so.register_custom_ops_library(register_python_ops())
        if isinstance(model, (str, Path)):  # the renamed graph is fed as bytes; its data file stays on disk
            from studio.core.external_data import uses_external_data

            if uses_external_data(proto):
                so.add_session_config_entry("session.model_external_initializers_file_folder_path",
                                            str(Path(model).resolve().parent))
        feed = to_python_op_domain(proto).SerializeToString()
    return ort_session(feed, so, providers, what=where)

"""ONNX's protobuf classes and C++ operator schemas without importing the ``onnx`` package.

``import onnx`` costs ~180 ms here, most of it numpy and ml_dtypes pulled in by ``onnx.helper``; reading a model's
graph needs only the generated ``onnx_ml_pb2`` (protobuf, ~25 ms) and operator schemas only the C++ extension
(~7 ms). The inspector's CLI start-up is measured against a floor that imports onnx, so this is where it gains.

Safety:
- With onnx already imported, its own modules are returned: nothing is loaded twice.
- The generated file is loaded under a private name; a later real ``import onnx`` executes it again, which
  protobuf's upb backend accepts (the same file in the default pool) and maps to the same message classes (checked
  by the tests). Other protobuf backends get the real onnx import.
- The C++ extension can exist only once per process, so it is registered under its real name; a later real
  ``import onnx`` reuses it, and a one-shot import hook puts it on the package as the normal import would have.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

_PB2 = "studio_onnx_ml_pb2"  # private name of the light onnx_ml_pb2
_EXT = "onnx.onnx_cpp2py_export"
_pb2: ModuleType | None = None


def _onnx_root() -> Path:
    spec = importlib.util.find_spec("onnx")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("onnx is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _upb() -> bool:
    try:
        from google.protobuf.internal import api_implementation
    except ImportError:
        return False
    return api_implementation.Type() == "upb"


def proto() -> ModuleType:
    """``onnx.onnx_ml_pb2``: ModelProto, TensorProto, ... (the real module once onnx is imported)."""
    global _pb2
    real = sys.modules.get("onnx.onnx_ml_pb2")
    if real is not None and "onnx" in sys.modules and hasattr(sys.modules["onnx"], "ModelProto"):
        return real
    if _pb2 is not None:
        return _pb2
    if not _upb():
        import onnx.onnx_ml_pb2

        return onnx.onnx_ml_pb2
    spec = importlib.util.spec_from_file_location(_PB2, _onnx_root() / "onnx_ml_pb2.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _pb2 = module
    return module


class _AttachExtension(importlib.abc.MetaPathFinder):
    """One shot: when the real ``onnx`` package is imported, give it the extension already loaded, as an
    attribute (an import of a module already in sys.modules does not set it on its package)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "onnx":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        inner = spec.loader

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return inner.create_module(spec)

            def exec_module(self, module: ModuleType) -> None:
                ext = sys.modules.get(_EXT)
                if ext is not None:
                    module.onnx_cpp2py_export = ext  # type: ignore[attr-defined]
                inner.exec_module(module)

        spec.loader = _Loader()
        return spec


def cpp() -> ModuleType:
    """``onnx.onnx_cpp2py_export`` (schemas, shape inference, checker) with or without the onnx package."""
    loaded = sys.modules.get(_EXT)
    if loaded is not None:
        return loaded
    if "onnx" in sys.modules:  # the package is (being) imported: let it load its extension the normal way
        import onnx.onnx_cpp2py_export

        return onnx.onnx_cpp2py_export
    root = _onnx_root()
    ext = next((root / f"onnx_cpp2py_export{s}" for s in importlib.machinery.EXTENSION_SUFFIXES
                if (root / f"onnx_cpp2py_export{s}").exists()), None)
    if ext is None:
        raise ImportError(f"onnx's C++ extension is missing from {root}")
    spec = importlib.util.spec_from_file_location(_EXT, ext)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[_EXT] = module
    if not any(isinstance(f, _AttachExtension) for f in sys.meta_path):
        sys.meta_path.insert(0, _AttachExtension())
    return module


def infer_shapes(data: bytes) -> bytes:
    """onnx's C++ shape inference on a serialized model, with the flags the inspector asks of
    ``onnx.shape_inference.infer_shapes`` (check_type off, strict_mode off, data_prop on); raises as it does."""
    return cpp().shape_inference.infer_shapes(data, False, False, True)


def get_schema(op_type: str, opset: int, domain: str) -> Any:
    """``onnx.defs.get_schema``; raises as it does for an unknown operator."""
    return cpp().defs.get_schema(op_type, opset, domain)


# AttributeProto.type -> its field (onnx.helper.get_attribute_value without onnx.helper and numpy)
_ATTR_FIELDS = {1: "f", 2: "i", 3: "s", 4: "t", 5: "g", 11: "sparse_tensor", 13: "tp", 6: "floats", 7: "ints",
                8: "strings", 9: "tensors", 10: "graphs", 12: "sparse_tensors", 14: "type_protos"}


def attribute_value(attr: Any) -> Any:
    """The value of an AttributeProto, as ``onnx.helper.get_attribute_value`` gives it (lists for repeated)."""
    field = _ATTR_FIELDS.get(attr.type)
    if field is None:
        raise ValueError(f"unsupported attribute type {attr.type} of attribute {attr.name!r}")
    value = getattr(attr, field)
    return list(value) if attr.type in (6, 7, 8, 9, 10, 12, 14) else value


# TensorProto.data_type -> (struct code of raw_data, typed field); those numpy_helper stores in int32_data too
_SMALL_TYPES = {1: ("f", "float_data"), 11: ("d", "double_data"), 6: ("i", "int32_data"), 7: ("q", "int64_data"),
                3: ("b", "int32_data"), 5: ("h", "int32_data"), 2: ("B", "int32_data"), 4: ("H", "int32_data"),
                12: ("I", "uint64_data"), 13: ("Q", "uint64_data")}


def tensor_values(t: Any, limit: int = 4096) -> tuple[tuple[int, ...], list[Any]] | None:
    """``(dims, flat values)`` of a small numeric TensorProto held in the file, or None (external data, another
    type, more than ``limit`` elements, or data that does not match its dims)."""
    kind = _SMALL_TYPES.get(t.data_type)
    if kind is None or t.data_location == 1:
        return None
    dims = tuple(int(d) for d in t.dims)
    size = 1
    for d in dims:
        size *= d
    if size < 0 or size > limit:
        return None
    code, field = kind
    if t.raw_data:
        raw = t.raw_data
        if len(raw) != size * struct.calcsize(code):
            return None
        return dims, list(struct.unpack(f"<{size}{code}", raw))
    values = list(getattr(t, field))
    return (dims, values) if len(values) == size else None


def const_values(t: Any, limit: int = 4096) -> tuple[tuple[int, ...], list[Any]] | None:
    """``tensor_values`` for the common numeric types; any other type through ``onnx.numpy_helper`` (the full
    import, rare here) so that every tensor reads as it did; None when it cannot be read or is over ``limit``."""
    if t.data_location == 1:
        return None
    if t.data_type in _SMALL_TYPES:
        return tensor_values(t, limit)
    from onnx import numpy_helper

    try:
        arr = numpy_helper.to_array(t)
    except Exception:  # noqa: BLE001 - a malformed tensor is simply not a readable constant
        return None
    if arr.size > limit:
        return None
    return tuple(int(d) for d in arr.shape), arr.reshape(-1).tolist()

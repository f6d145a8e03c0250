"""config.pbtxt through Triton's own protobuf (``model_config_pb2.ModelConfig``), never string templates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.core.atomic import write_text_atomic
from studio.core.errors import DependencyMissing, InputError, ValidationError


def pb2() -> Any:
    """The ``model_config_pb2`` module shipped with tritonclient."""
    try:
        from tritonclient.grpc import model_config_pb2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise DependencyMissing.for_module("tritonclient", "triton", "Triton model configs") from exc
    return model_config_pb2


def new_config(**fields: Any) -> Any:
    return pb2().ModelConfig(**fields)


def to_text(cfg: Any) -> str:
    from google.protobuf import text_format

    return text_format.MessageToString(cfg, as_utf8=True)


def parse_text(text: str, source: str = "config.pbtxt") -> Any:
    """Parse config text; a syntax or unknown-field error becomes a ValidationError naming the line."""
    from google.protobuf import text_format

    cfg = pb2().ModelConfig()
    try:
        text_format.Parse(text, cfg)
    except text_format.ParseError as exc:
        raise ValidationError(f"{source} does not parse as a Triton ModelConfig: {exc}", offending=source,
                              hint="fix the field named in the message; field names follow model_config.proto") \
            from exc
    return cfg


def load_config(path: Path | str) -> Any:
    path = Path(path)
    return parse_text(path.read_text(encoding="utf-8"), str(path))


def write_config(path: Path | str, cfg: Any) -> Path:
    """Serialise, re-parse (so what lands on disk is known to parse) and write atomically."""
    text = to_text(cfg)
    parse_text(text, str(path))
    return write_text_atomic(path, text)


def type_name(value: int) -> str:
    return pb2().DataType.Name(value)


def type_value(name: str) -> int:
    return pb2().DataType.Value(name)


def kind_value(name: str) -> int:
    """``cpu``/``KIND_CPU`` -> enum value of ModelInstanceGroup.Kind."""
    m = pb2()
    key = name.upper()
    if not key.startswith("KIND_"):
        key = "KIND_" + key
    return m.ModelInstanceGroup.Kind.Value(key)


def get_parameter(cfg: Any, key: str, default: str | None = None) -> str | None:
    if key in cfg.parameters:
        return cfg.parameters[key].string_value
    return default


def set_parameter(cfg: Any, key: str, value: str) -> None:
    cfg.parameters[key].string_value = value


TRT_PRECISIONS = ("FP16", "FP32")


def set_tensorrt(cfg: Any, precision: str = "FP16", workspace_bytes: int = 1 << 30) -> Any:
    """Add ``optimization.execution_accelerators.gpu_execution_accelerator`` "tensorrt" (ORT backend's TRT EP)."""
    precision = precision.upper()
    if precision not in TRT_PRECISIONS:
        raise InputError(f"unknown TensorRT precision {precision!r}", offending="--trt-precision",
                         hint=f"use {' or '.join(TRT_PRECISIONS)}")
    if workspace_bytes <= 0:
        raise InputError("the TensorRT workspace must be > 0 bytes", offending="--trt-workspace-bytes")
    accs = cfg.optimization.execution_accelerators.gpu_execution_accelerator
    for i in reversed([i for i, a in enumerate(accs) if a.name == "tensorrt"]):
        del accs[i]
    acc = accs.add(name="tensorrt")
    acc.parameters["precision_mode"] = precision
    acc.parameters["max_workspace_size_bytes"] = str(int(workspace_bytes))
    return acc


def config_to_dict(cfg: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    return json_format.MessageToDict(cfg, preserving_proto_field_name=True)

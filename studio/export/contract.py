"""The export contract: the options an export takes and the report it returns (inputs, outputs, validation,
diagnosis), apart from the entry point (``studio.export.api.export_model``) so that the pipeline, its stages and
the signature readers import the data without importing the entry point that imports them: no import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.parity import OutputParity
from studio.core.reports import Report

SCHEMA_VERSION = 1
MODALITIES = ("text", "vision", "audio")


@dataclass
class InputSpec:
    """One model input in the signature: ``modality:name`` plus its dynamic axes (axis index -> name)."""

    modality: str
    name: str
    dynamic_axes: dict[int, str] = field(default_factory=dict)
    dtype: str = ""  # "int64", "float32", ...
    example_shape: list[int] = field(default_factory=list)


@dataclass
class ExportOptions:
    model_dir: Path
    output: Path  # the monolithic model.onnx; companions (tokenizer, parts, report) go beside it
    input_signature: list[InputSpec] | None = None  # None: inferred from model class and processor
    opset: int = 17
    dynamic: list[str] | None = None  # axis names to keep dynamic, e.g. ["batch", "sequence"]; None = default
    exporter: str = "torchscript"  # "torchscript" | "dynamo"
    split_modalities: bool = False
    atol: float = 1e-4
    rtol: float = 1e-3
    report: Path | None = None
    validation_cases: int = 3  # random inputs for parity; at least one with new batch and sequence lengths
    attn_implementation: str | None = None  # e.g. "eager": load the model with it (GQA models + torchscript)
    with_past: bool | None = None  # KV cache inputs/outputs; None: on for decoder-only (*ForCausalLM) models
    # per part after export: {"vision": "int8", "text": "fp16"} or "vision=int8,text=fp16" (studio.export.precision)
    precision: dict[str, str] | str | None = None
    precision_atol: float | None = None  # pass bounds vs the FP32 part; None: per precision (core.parity.TOLERANCES)
    precision_min_cosine: float | None = None
    kv_cache_dtype: str = "float32"  # "float16": past/present in FP16 (with_past exports)
    external_data: bool | None = None  # weights in <model>.onnx.data; None: when they pass ~1.8 GB (2 GB: protobuf)


@dataclass
class OutputFile:
    path: str
    kind: str  # "model" | "part" | "data" (a model's external weights) | "tokenizer" | "processor" | "config" | "report"
    modality: str | None = None
    size_bytes: int = 0


@dataclass
class ValidationCase:
    name: str  # e.g. "traced shapes", "batch=3 sequence=11"
    graph: str  # which graph: "model" or a part name, or "chained parts"
    input_shapes: dict[str, list[int]]
    outputs: list[OutputParity] = field(default_factory=list)  # studio.core.parity's, one per output
    passed: bool = False
    error: str | None = None


@dataclass
class Validation:
    checker: str = "not run"  # "passed" | "failed: ..." | "not run"
    shape_inference: str = "not run"
    ort_load: str = "not run"
    cases: list[ValidationCase] = field(default_factory=list)
    atol: float = 1e-4
    rtol: float = 1e-3

    @property
    def passed(self) -> bool:
        return (self.checker == "passed" and self.ort_load == "passed" and bool(self.cases)
                and all(c.passed for c in self.cases))


@dataclass
class Diagnosis:
    """Why an export failed and what to do about it."""

    stage: str  # "load" | "trace" | "export" | "checker" | "shape_inference" | "ort_load" | "parity" | "tokenizer"
    error_class: str  # "unsupported_op_at_opset" | "data_dependent_control_flow" | "shape_not_dynamic" | "dtype" | ...
    message: str
    fix: str
    node: str | None = None  # ONNX node name when known
    op_type: str | None = None
    module: str | None = None  # torch module path when known, e.g. "vision_model.encoder.layers.0"
    raw_log: str = ""
    snippet: dict[str, Any] | None = None  # small graph around the node: {"nodes": [...], "edges": [...], "focus": name}


@dataclass
class GenerationValidation:
    """With a KV cache (``with_past``): greedy ids of the ONNX decoder vs HF ``generate()`` per prompt, per-step
    logits max abs diff, and the cache layout written to generation.json / genai_config.json."""

    status: str = "not run"  # "passed" | "failed" | "not run"
    cache: dict[str, Any] = field(default_factory=dict)  # layers, kv_heads, head_dim, dtype, layout, ids, context
    prompts: list[dict[str, Any]] = field(default_factory=list)  # per prompt: ids, match, first_divergence, ...
    logits_max_abs: float | None = None
    runtime: str = ""
    files: list[str] = field(default_factory=list)


@dataclass
class ExportReport(Report):
    schema_version: int = SCHEMA_VERSION
    status: str = "failed"  # "succeeded" | "failed" | "cancelled"
    model_dir: str = ""
    model_type: str = ""  # config.model_type
    model_class: str = ""
    tokenizer_class: str | None = None  # what the model's files provide
    expected_tokenizer_class: str | None = None  # what the model type expects
    processor_class: str | None = None  # what AutoProcessor builds from the folder (None: no processor / fails)
    warnings: list[str] = field(default_factory=list)
    opset: int | None = None  # the opset the model file was written at (dynamo may not honour --opset < 18)
    options: dict[str, Any] = field(default_factory=dict)
    signature: list[InputSpec] = field(default_factory=list)
    outputs: list[OutputFile] = field(default_factory=list)
    parts: dict[str, dict[str, Any]] = field(default_factory=dict)  # part -> {path, inputs, outputs, modality}
    validation: Validation = field(default_factory=Validation)
    diagnosis: Diagnosis | None = None
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    peak_rss_gb: dict[str, float] = field(default_factory=dict)  # stage -> the process's peak RSS at its end (GB)
    memory: dict[str, Any] = field(default_factory=dict)  # the estimate made before the export (studio.export.memory)
    generation: GenerationValidation | None = None  # with_past exports only
    precision: dict[str, Any] = field(default_factory=dict)  # --precision / --kv-cache-dtype: per-part figures
    # how the example inputs were made: processor class and origin (folder / derived), prompt form, derived
    # defaults, inputs added beside the signature's, processor outputs the forward does not take
    example_inputs: dict[str, Any] = field(default_factory=dict)
    # declared (config sub-configs + processor), exported (consumed by the graph), text_only (asked for)
    modalities: dict[str, Any] = field(default_factory=dict)

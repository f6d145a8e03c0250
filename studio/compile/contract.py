"""The compile contract: the options a compile takes and the report it returns (artifacts, parity, latency,
diagnosis), apart from the entry point (``studio.compile.api.compile_model``) so that the pipeline and the backends
(plugins/studio-rknn) import the data without importing the entry point that imports them: no import circle.
"""

from __future__ import annotations

import hashlib
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.catalogue import _, tr
from studio.core.parity import OutputParity
from studio.core.reports import Report

SCHEMA_VERSION = 1
REPORT_FILE = "compile_report.json"


@dataclass
class CompileOptions:
    model: Path
    target: str = "llvm"  # llvm | aarch64 | aarch64-neon | opencl | vulkan | a board id
    out: Path | None = None  # default: WORKSPACE/compiled/ or ./compiled/<name>-<target> (studio.compile.outputs)
    shapes: dict[str, list[int]] = field(default_factory=dict)  # --shape overrides
    verify: bool = True
    force: bool = False  # overwrite a non-empty output folder
    precheck: bool = True
    localise: bool = True  # bisect the graph when import or build fails
    simplify: bool = False  # fold shape arithmetic with onnxslim at the static shapes before importing
    atol: float | None = None  # None: the backend's default (tvm 1e-4 / 1e-3; rknn by its dtype)
    rtol: float | None = None
    latency_runs: int = 20
    seed: int = 0
    save_failing_subgraph: Path | None = None  # where to write the reduced failing graph (.onnx)
    backend: str = "tvm"  # "tvm" (built in) or a compiler a plugin contributes ("rknn": plugins/studio-rknn)
    quantize: str = ""  # "" (the backend's float build: fp16 for rknn) or "int8"
    calibration: Path | None = None  # int8: a folder of .npy/.npz samples, or a dataset list (default: seeded)
    auto_hybrid: float | None = None  # rknn int8: layers whose per-layer cosine falls below it stay float16


@dataclass
class Artifact:
    path: str  # relative to the output folder
    kind: str  # "library" | "objects" | "params" | "metadata" | "report"
    size_bytes: int = 0
    sha256: str = ""
    machines: dict[str, str] = field(default_factory=dict)  # ELF members -> machine (aarch64, x86_64)


@dataclass
class Parity:
    status: str = "not run"  # "passed" | "failed" | "skipped: ..." | "not run"
    mode: str = ""  # "artifact" (the written library on this host) | "host-proxy" (same module built for llvm)
    atol: float = 1e-4
    rtol: float = 1e-3
    outputs: list[OutputParity] = field(default_factory=list)  # one per output, by studio.core.parity's rule
    input_shapes: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class Latency:
    runs: int = 0
    tvm_ms_median: float | None = None
    ort_ms_median: float | None = None
    tvm_ms_p90: float | None = None
    ort_ms_p90: float | None = None
    speedup_vs_ort: float | None = None  # ort / tvm: > 1 means the compiled module is faster
    note: str = ""


@dataclass
class CompileDiagnosis:
    """Why a compile failed, where (the smallest failing node set) and what to do."""

    stage: str  # "precheck" | "import" | "lower" | "build" | "export" | "verify"
    error_class: str  # "unsupported_op" | "import_error" | "build_error" | "parity" | ...
    message: str
    hint: str
    nodes: list[str] = field(default_factory=list)  # failing nodes, the culprit last
    op_types: list[str] = field(default_factory=list)
    culprit: str | None = None
    culprit_op: str | None = None
    tvm_error: str = ""
    localisation: dict[str, Any] = field(default_factory=dict)  # trials, mode, cut inputs, subgraph path
    findings: list[dict[str, Any]] = field(default_factory=list)  # pre-check findings


@dataclass
class CompileReport(Report):
    schema_version: int = SCHEMA_VERSION
    status: str = "failed"  # "succeeded" | "failed"
    model: str = ""
    target: str = ""
    board: str | None = None
    target_json: dict[str, Any] = field(default_factory=dict)
    target_description: str = ""
    device: str = "cpu"
    out_dir: str = ""
    tvm_version: str = ""
    host: str = field(default_factory=lambda: f"{platform.system()}-{platform.machine()}")
    input_shapes: dict[str, list[int]] = field(default_factory=dict)
    input_dtypes: dict[str, str] = field(default_factory=dict)
    dynamic_dims: list[dict[str, Any]] = field(default_factory=list)  # dims fixed for this build
    dynamic_trace: Any = None  # the inspector's dynamic-dim tracing, when it ran
    precheck: dict[str, Any] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    parity: Parity = field(default_factory=Parity)
    latency: Latency = field(default_factory=Latency)
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    diagnosis: CompileDiagnosis | None = None
    mlc: dict[str, Any] = field(default_factory=dict)
    backend: str = "tvm"
    toolchain: dict[str, Any] = field(default_factory=dict)  # the compiler that built it: name, version, platform
    layer_errors: list[dict[str, Any]] = field(default_factory=list)  # per-layer error (rknn accuracy_analysis)

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    def summary(self) -> str:
        """A few lines for the CLI, in the user's language (studio.core.catalogue: the status words, a
        diagnosis the catalogue knows); the tool's own error (``TVM: ...``) as it came."""
        lines = [tr("compile {model} for {target}: {status}", model=Path(self.model).name, target=self.target,
                    status=_(self.status))]
        if self.toolchain:
            t = self.toolchain
            lines.append("  " + tr("toolchain {name} {version}, platform {platform}, {dtype}", name=t.get("name"),
                                   version=t.get("version"), platform=t.get("platform"), dtype=t.get("dtype")))
        if self.ok:
            for a in self.artifacts:
                mach = f"  [{', '.join(sorted(set(a.machines.values())))}]" if a.machines else ""
                size = f"  ({a.size_bytes} B)" if a.size_bytes else ""
                lines.append(f"  {a.kind:9} {Path(self.out_dir) / a.path}{size}{mach}")
            p = self.parity
            if p.outputs:
                worst = max(p.outputs, key=lambda o: o.max_abs)
                lines.append("  " + tr("parity vs ONNX Runtime ({mode}): {status}, max abs {max_abs}, max rel "
                                       "{max_rel}", mode=p.mode, status=_(p.status), max_abs=f"{worst.max_abs:.3g}",
                                       max_rel=f"{max(o.max_rel for o in p.outputs):.3g}"))
            else:
                lines.append("  " + tr("parity vs ONNX Runtime: {status}", status=_(p.status)))
            lat = self.latency
            if lat.tvm_ms_median is not None and lat.ort_ms_median is not None:
                lines.append("  " + tr("latency (median of {runs}): TVM {tvm} ms, ORT {ort} ms, speed-up {speedup}x",
                                       runs=lat.runs, tvm=f"{lat.tvm_ms_median:.3f}", ort=f"{lat.ort_ms_median:.3f}",
                                       speedup=f"{lat.speedup_vs_ort:.2f}"))
        if self.diagnosis:
            d = self.diagnosis
            lines.append("  " + tr("failed at {stage}: {message}", stage=d.stage, message=_(d.message)))
            if d.nodes:
                lines.append("  " + tr("failing nodes ({n}): {nodes}", n=len(d.nodes), nodes=", ".join(
                    f"{n} ({o})" for n, o in list(zip(d.nodes, d.op_types, strict=False))[-8:])))
            if d.tvm_error:
                lines.append(f"  TVM: {d.tvm_error}")
            lines.append(tr("  hint: {hint}", hint=_(d.hint)))
        for w in self.warnings:
            lines.append("  " + tr("warning: {message}", message=_(w)))
        return "\n".join(lines)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def time_it(timings: dict[str, float], key: str, t0: float) -> float:
    timings[key] = round(time.perf_counter() - t0, 4)
    return time.perf_counter()

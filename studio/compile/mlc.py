"""MLC-LLM for the language-model part of a VLM: ``mlc_llm convert_weight / gen_config / compile``.

Boundary: the studio builds the three commands (``plan_llm``) and runs them as subprocesses of the same
interpreter (``python -m mlc_llm ...``), then records what they wrote. It never imports mlc_llm itself, so
a broken MLC install cannot take the studio down. MLC publishes its wheels only on its own index (PyPI holds
placeholders), so this path is NOT exercised by the test suite here: ``plan_llm`` and ``mlc_status`` are;
``run_llm`` is written to MLC's documented CLI and checked only up to the "not installed" refusal.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import DependencyMissing, InputError, StudioError
from studio.core.jobs import JobState

INSTALL_HINT = ("mlc_llm is published on MLC's own wheel index, not PyPI: follow "
                "https://llm.mlc.ai/docs/install/mlc_llm.html (python3 -m pip install --pre -f "
                "https://mlc.ai/wheels mlc-llm-nightly-cpu mlc-ai-nightly-cpu), then re-run")
# studio target kind -> mlc_llm --device
MLC_DEVICE = {"opencl": "opencl", "vulkan": "vulkan", "llvm": "llvm", "cuda": "cuda", "metal": "metal"}


@dataclass
class MlcStatus:
    available: bool
    version: str | None
    message: str


def mlc_status() -> MlcStatus:
    """Whether ``mlc_llm`` is importable, without importing it."""
    try:
        spec = importlib.util.find_spec("mlc_llm")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return MlcStatus(False, None, "mlc_llm is not installed; " + INSTALL_HINT)
    try:
        from importlib.metadata import PackageNotFoundError, version

        for dist in ("mlc-llm", "mlc-llm-nightly", "mlc-llm-nightly-cpu"):
            try:
                return MlcStatus(True, version(dist), "mlc_llm is installed")
            except PackageNotFoundError:
                continue
    except Exception:
        pass
    return MlcStatus(True, None, "mlc_llm is installed")


@dataclass
class MlcPlan:
    model_dir: str
    out_dir: str
    quantization: str
    device: str
    conv_template: str
    model_type: str | None
    commands: list[list[str]] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)  # what the commands are expected to write


def _language_model_dir(model_dir: Path) -> tuple[str | None, str]:
    """(model_type for --model-type, description) of the language model inside an HF folder."""
    cfg_file = model_dir / "config.json"
    if not cfg_file.is_file():
        raise InputError(f"{model_dir} is not a HuggingFace model folder (no config.json)", offending=str(model_dir),
                         hint="point at the folder written by save_pretrained")
    cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
    text_cfg = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else None
    if text_cfg is not None:  # a VLM: MLC's loaders for the architecture pick out the LM weights
        return None, f"language model of {cfg.get('model_type', '?')} ({text_cfg.get('model_type', '?')})"
    return None, f"language model {cfg.get('model_type', '?')}"


def plan_llm(model_dir: Path | str, out_dir: Path | str, *, target_kind: str = "opencl",
             quantization: str = "q4f16_1", conv_template: str = "chatml",
             model_type: str | None = None) -> MlcPlan:
    """The three MLC commands for this model and target (no MLC needed to plan)."""
    model_dir, out_dir = Path(model_dir), Path(out_dir)
    auto_type, _ = _language_model_dir(model_dir)
    mt = model_type or auto_type
    device = MLC_DEVICE.get(target_kind, target_kind)
    weights = out_dir / "mlc-weights"
    lib = out_dir / f"mlc-lib-{device}.so"
    py = [sys.executable, "-m", "mlc_llm"]
    type_args = ["--model-type", mt] if mt else []
    plan = MlcPlan(str(model_dir), str(out_dir), quantization, device, conv_template, mt)
    plan.commands = [
        py + ["convert_weight", str(model_dir), "--quantization", quantization, *type_args, "-o", str(weights)],
        py + ["gen_config", str(model_dir), "--quantization", quantization, "--conv-template", conv_template,
              *type_args, "-o", str(weights)],
        py + ["compile", str(weights / "mlc-chat-config.json"), "--device", device, "-o", str(lib)],
    ]
    plan.artifacts = [str(weights / "mlc-chat-config.json"), str(weights / "tensor-cache.json"), str(lib)]
    return plan


def run_llm(plan: MlcPlan, job: JobState | None = None, timeout_s: float = 3600) -> dict[str, Any]:
    """Run the plan's commands in order; DependencyMissing when mlc_llm is absent. Returns the record."""
    status = mlc_status()
    if not status.available:
        err = DependencyMissing("compiling the language model with MLC needs the Python package 'mlc_llm'",
                                offending="mlc_llm", hint=INSTALL_HINT)
        raise err
    record: dict[str, Any] = {"mlc_version": status.version, "steps": [], "artifacts": []}
    Path(plan.out_dir).mkdir(parents=True, exist_ok=True)
    for i, cmd in enumerate(plan.commands):
        step = cmd[3]
        if job is not None:
            job.set_status(f"mlc_llm {step}")
            job.set_progress(100.0 * i / len(plan.commands), force=True)
            job.check_cancelled()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        record["steps"].append({"step": step, "command": cmd, "returncode": proc.returncode,
                                "log_tail": (proc.stdout + proc.stderr)[-4000:]})
        if proc.returncode != 0:
            raise StudioError(f"mlc_llm {step} failed (exit {proc.returncode})", offending=step,
                              hint="see the log tail in the report; MLC supports the architectures listed in "
                                   "its docs (model-type), and quantization names like q4f16_1 / q0f16",
                              details=record)
    record["artifacts"] = [{"path": a, "size_bytes": Path(a).stat().st_size}
                           for a in plan.artifacts if Path(a).exists()]
    return record

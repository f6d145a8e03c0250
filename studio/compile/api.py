"""The compile entry point: options in, one report out (the data: studio.compile.contract). The CLI, the GUI
Compile page and tests call this.

``compile_model`` raises StudioError for bad input (missing model, unknown target, dynamic dims without
``--shape``, existing output without ``force``, an output folder inside an export folder) and for a missing
apache-tvm, before anything is written.
A compile that fails at a stage (pre-check, import, lower, build, verify) returns a report with
``status == "failed"`` and a ``diagnosis`` naming the failing nodes; the output folder is then untouched.
On success the whole output folder is written in a temp sibling and renamed into place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studio.compile.contract import (  # the contract, re-exported: callers import it from here
    REPORT_FILE,
    SCHEMA_VERSION,
    Artifact,
    CompileDiagnosis,
    CompileOptions,
    CompileReport,
    Latency,
    Parity,
    sha256_file,
    time_it,
)

__all__ = ["SCHEMA_VERSION", "REPORT_FILE", "CompileOptions", "Artifact", "Parity", "Latency",
           "CompileDiagnosis", "CompileReport", "sha256_file", "time_it", "default_out", "compile_model",
           "list_targets", "availability"]


def default_out(model: Path, target: str, cwd: Path | None = None) -> Path:
    """WORKSPACE/compiled/<name>-<target> for a model in a workspace, else ./compiled/<name>-<target>; never
    inside the model's folder or an export folder (see studio.compile.outputs)."""
    from studio.compile.outputs import default_out as _default_out

    return _default_out(model, target, cwd)


def compile_model(options: CompileOptions, job: Any = None) -> CompileReport:
    """Pre-check, import, lower, build, export, verify. ``job`` is a studio.core.jobs.JobState (or None).
    A backend other than "tvm" is the ``compilers`` contribution of that name (a plugin's), same contract."""
    if options.backend != "tvm":
        from studio.core.errors import InputError, PluginError
        from studio.core.plugins import contributions, resolve

        try:
            compiler = resolve("compilers", options.backend)
        except PluginError as exc:
            known = ", ".join(["tvm", *sorted(c.name for c in contributions("compilers") if c.name != "tvm-relax")])
            raise InputError(f"no compile backend '{options.backend}' here: {exc.message}",
                             offending=options.backend,
                             hint=f"backends: {known}; rknn comes with plugins/studio-rknn "
                                  "(make venv installs it; its toolkit: studio-rknn-env create)") from exc
        return compiler(options, job)
    if options.auto_hybrid is not None:
        from studio.core.errors import InputError

        raise InputError("--auto-hybrid is an rknn int8 option; TVM builds float", offending="--auto-hybrid",
                         hint="drop it, or compile with --backend rknn --quantize int8")
    from studio.compile.pipeline import run_compile

    return run_compile(options, job)


def list_targets() -> list[dict[str, str]]:
    """Every compile target id with its description (for CLI help and the GUI's target choice)."""
    from studio.compile.targets import resolve_target, target_ids

    out = []
    for tid in target_ids():
        try:
            t = resolve_target(tid)
            out.append({"id": tid, "description": t.description, "device": t.device, "board": t.board or ""})
        except Exception as exc:  # a broken board yaml is listed with its error
            out.append({"id": tid, "description": f"unusable: {exc}", "device": "", "board": tid})
    return out


def availability() -> dict[str, Any]:
    """What the compile path can do here: TVM, its code generators, the cross compiler, mlc_llm."""
    import shutil

    from studio.compile.mlc import mlc_status
    from studio.compile.targets import AARCH64_CC
    from studio.compile.tvm_backend import tvm_status

    ok, ver = tvm_status()
    mlc = mlc_status()
    return {"tvm": {"available": ok, "version" if ok else "message": ver},
            "aarch64_cc": shutil.which(AARCH64_CC),
            "mlc_llm": {"available": mlc.available, "version": mlc.version, "message": mlc.message}}

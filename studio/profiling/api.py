"""The profiling API: one call in, one ProfileReport out (CLI, the inspector overlay and bench call this).

    rep = profile("model.onnx", shapes={"input_ids": [1, 16]}, runs=20)      # ORT per node (+ modules)
    rep.node_times(); rep.shares(); rep.top(10)                              # what the overlay shows
    save_to_workspace(rep, ws)                                               # WS/reports/<stem>.profile.json
    compare_profiles(ProfileReport.load(a), ProfileReport.load(b))           # before/after a fix
"""

from __future__ import annotations

from pathlib import Path

from studio.core.catalogue import N_
from studio.core.jobs import JobState, Stages
from studio.profiling.report import (
    ModuleTime,
    NodeTime,
    ProfileComparison,
    ProfileReport,
    compare_profiles,
    render_comparison_text,
    render_profile_text,
)

__all__ = ["profile", "save_to_workspace", "workspace_profile_path", "compare_profiles", "ProfileReport",
           "ProfileComparison", "NodeTime", "ModuleTime", "render_profile_text", "render_comparison_text"]


def profile(model: Path | str, *, shapes: dict[str, list[int]] | None = None, runs: int = 20, warmup: int = 3,
            optimization: str = "all", custom_op_lib: Path | str | None = None, hf_model: Path | str | None = None,
            torch_modules: bool | None = None, torch_runs: int | None = None, threads: int | None = None,
            job: JobState | None = None) -> ProfileReport:
    """ORT per-node profile of ``model``; module scopes from the exporter's names/metadata; and, for an HF
    export (``hf_model`` or a config.json beside the model), PyTorch per-module times on the same inputs.

    ``torch_modules``: None = when an HF folder is found, True = required, False = never.
    """
    import onnx

    from studio.core.errors import InputError
    from studio.profiling.modules import attach_modules, find_hf_config
    from studio.profiling.ort import profile_model

    job = job or JobState(name="profile")
    stages = Stages(job, {"ort": 3, "torch": 2})
    stages.begin("ort", f"profiling {Path(model).name} with ONNX Runtime")
    rep = profile_model(model, shapes=shapes, runs=runs, warmup=warmup, optimization=optimization,
                        custom_op_lib=custom_op_lib, threads=threads, job=job)
    proto = onnx.load(str(model), load_external_data=False)
    hf = find_hf_config(Path(model), Path(hf_model) if hf_model else None) if torch_modules is not False else None
    if torch_modules and hf is None:
        raise InputError("no HF model folder for per-module times", offending=str(model),
                         hint="give --hf-model DIR (the folder the model was exported from)")
    types = times = None
    if hf is not None:
        stages.begin("torch", "PyTorch per-module times")
        from studio.profiling.torch_modules import module_times

        try:
            types, times, rep.torch = module_times(hf, rep._feed, runs=torch_runs or min(runs, 10),
                                                   warmup=min(warmup, 2))
        except Exception as exc:
            if torch_modules:
                raise
            rep.warnings.append(N_(f"PyTorch per-module times skipped: {exc}"))
            rep.torch = {"error": str(exc)[:300]}
    attach_modules(rep, proto, types, times)
    job.set_progress(100, force=True)
    return rep


def workspace_profile_path(ws: object, model: Path | str) -> Path:
    """WS/reports/<model stem>.profile.json: the latest profile of that model in the workspace."""
    return Path(ws.reports_dir) / f"{Path(model).stem}.profile.json"  # type: ignore[attr-defined]


def save_to_workspace(rep: ProfileReport, ws: object) -> Path:
    path = workspace_profile_path(ws, rep.model)
    path.parent.mkdir(parents=True, exist_ok=True)
    return rep.save(path)

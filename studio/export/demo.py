"""The built-in demo workspace of `make run`: tiny sample models written from transformers configs (export's
samples, so it lives here, above core)."""

from __future__ import annotations

from pathlib import Path

from studio.core.jobs import JobState
from studio.core.sample_inputs import write_sample_inputs
from studio.core.workspace import Workspace

DEMO_SAMPLES = ("tiny-clip", "tiny-vilt", "tiny-siglip", "tiny-whisper", "tiny-qwen2-vl")


def create_demo_workspace(root: Path | str, job: JobState | None = None) -> Workspace:
    """Create (or reopen) a workspace holding every sample model not already there. Needs the export extra."""
    from studio.export.api import write_sample

    ws = Workspace.create(root, name="demo")
    write_sample_inputs(ws.root)  # an image and an audio clip for test inference
    for i, name in enumerate(DEMO_SAMPLES):
        if job:
            job.step(i, len(DEMO_SAMPLES), f"writing sample {name}")
        target = ws.models_dir / name
        if not (target / "config.json").exists():
            write_sample(name, target)
        if ws.model(name) is None:
            ws.add_model(target, name=name, kind="hf", source=f"sample:{name}", make_current=False)
    if ws.current_model is None:
        ws.current_model = DEMO_SAMPLES[0]
        ws.save()
    if job:
        job.set_progress(100)
    return ws

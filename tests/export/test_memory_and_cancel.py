"""The export's memory estimate (from the checkpoint's safetensors headers, before torch), the refusal of an export
that cannot fit (the estimate and the ways out, exit 2, nothing written), PyTorch's weights released before ONNX
Runtime parity, and Cancel inside the one long call of the export stage (stopped within a second, nothing left)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from studio.cli.main import main as studio_main  # noqa: E402
from studio.core.errors import JobCancelled  # noqa: E402
from studio.core.jobs import JobState  # noqa: E402
from studio.export.api import ExportOptions, export_model, write_sample  # noqa: E402
from studio.export.memory import checkpoint_weights, estimate  # noqa: E402

pytestmark = pytest.mark.export


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample("tiny-clip", tmp_path_factory.mktemp("s") / "tiny-clip")


def _params(folder: Path) -> int:
    from transformers import CLIPModel

    return sum(p.numel() for p in CLIPModel.from_pretrained(str(folder)).state_dict().values())


def test_estimate_reads_the_checkpoint_headers(clip: Path) -> None:
    w = checkpoint_weights(clip)
    assert w.parameters == _params(clip) and w.bytes == 4 * w.parameters and w.dtypes == {"F32": w.bytes}
    assert "safetensors" in w.source
    import json

    est = estimate(json.loads((clip / "config.json").read_text()), clip)
    assert est.weight_bytes == w.bytes and est.load_dtype == "float32"
    assert est.peak > est.weight_bytes and est.fits  # a tiny model fits anywhere
    plain, split, past = estimate({}, clip), estimate({}, clip, split=True), estimate({}, clip, with_past=True)
    assert split.stages["parity"] > plain.stages["parity"]  # PyTorch is kept through parity when a split follows
    assert "generation" in past.stages and past.stages["parity"] == plain.stages["parity"]  # reloaded after


def test_an_export_that_cannot_fit_stops_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    qwen2 = write_sample("tiny-qwen2", tmp_path / "tiny-qwen2")  # a decoder: the KV cache and generation are on
    monkeypatch.setenv("STUDIO_EXPORT_MEMORY", "0.5")  # a machine with 0.5 GB free
    out = tmp_path / "out" / "model.onnx"
    t0 = time.perf_counter()
    assert studio_main(["export", str(qwen2), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert time.perf_counter() - t0 < 5  # before torch, before any stage
    assert "will not fit in memory" in err and "estimated peak" in err and "0.5 GB free" in err
    assert "ways out:" in err and "--no-with-past" in err
    assert not (tmp_path / "out").exists()


def test_torch_weights_are_released_before_ort_parity(clip: Path, tmp_path: Path) -> None:
    job = JobState()
    rep = export_model(ExportOptions(model_dir=clip, output=tmp_path / "m" / "model.onnx"), job)
    assert rep.status == "succeeded" and rep.memory["weight_bytes"] > 0
    released = [line for line in job.log_lines if line.startswith("released")]
    assert len(released) == 1 and "parity" in released[0]
    first_ort = next(i for i, line in enumerate(job.log_lines) if "parity [" in line and "PyTorch" not in line)
    assert job.log_lines.index(released[0]) < first_ort


def test_cancel_inside_the_export_call_stops_within_a_second(clip: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.export import exporters

    def slow_export(module, args, f, **kw):  # type: ignore[no-untyped-def]
        Path(f).write_bytes(b"half a graph")  # something half-written, as a real exporter leaves
        n = 0
        while True:  # the exporter's Python, never checking the cancel flag itself
            n += 1

    monkeypatch.setattr(exporters.torch.onnx, "export", slow_export)
    job = JobState()
    out = tmp_path / "c" / "model.onnx"
    done: dict[str, object] = {}

    def run() -> None:
        try:
            export_model(ExportOptions(model_dir=clip, output=out), job)
        except JobCancelled as exc:
            done["cancelled"] = exc
            done["at"] = time.monotonic()

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 120
    while not (job.stage is not None and job.stage.name == "export") and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    asked = time.monotonic()
    job.cancel()
    t.join(30)
    assert "cancelled" in done and float(done["at"]) - asked < 1.0  # type: ignore[arg-type]
    assert not out.parent.exists() or not any(out.parent.iterdir()), "something was left at the output"

"""Parity against a board: an exported tiny CLIP packaged, deployed to a real agent on loopback and compared
with ONNX Runtime on the same file through the runner interface (``studio.core.parity`` + ``AgentRunner``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.core.parity import TOLERANCES, run_parity
from studio.core.runner import OnnxRuntimeRunner
from studio.package.agent_runner import AgentRunner
from studio.package.bundle import build_bundle
from studio.package.client import deploy_bundle
from tests.edge.helpers import AgentProcess, export_sample

pytestmark = pytest.mark.export


def test_exported_clip_on_the_agent_matches_onnx_runtime(tmp_path: Path, agent: AgentProcess, signing_key,
                                                         token_file: Path) -> None:  # type: ignore[no-untyped-def]
    _sample, onnx_dir = export_sample(tmp_path / "src", "tiny-clip")
    bundle = build_bundle(onnx_dir, "generic-x86_64", signing_key, tmp_path / "clip.tar", name="clip",
                          version="1").bundle
    token = token_file.read_text().strip()
    deploy_bundle(Path(bundle), agent.url, token)
    board = AgentRunner(agent.url, "clip", token)
    with OnnxRuntimeRunner(onnx_dir / "model.onnx") as ref, board:
        specs = board.input_metadata()  # the served model's own metadata makes the inputs
        assert {"input_ids", "attention_mask", "pixel_values"} <= set(specs)
        rep = run_parity(ref, board, tolerance=TOLERANCES["fp32"], cases=2, seed=3, dims={"batch": 2},
                         inputs_from=board)
    assert rep.passed, rep.summary_line("parity vs the agent", "agent")
    assert len(rep.cases) == 2 and all(c.error is None for c in rep.cases)
    names = {o.output for o in rep.cases[0].outputs}
    assert {"logits_per_image", "text_embeds", "image_embeds"} <= names
    assert len(board.inference_times) == 2  # one request per case, timed like any runner

    with pytest.raises(InputError, match="agent refused"), AgentRunner(agent.url, "absent", token):
        pass  # a model the agent does not serve: named on activate, not on the first inference

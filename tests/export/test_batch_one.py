"""A model whose own code runs only at batch 1 gets its example inputs at batch 1, said so, never a made-up batch.

TVP's column position embeddings are viewed with the batch size and added to a one-row table, so its forward
refuses any batch of 2 (a real transformers model, tiny, built from its config class; no hub).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from bench.coverage_shrink import shrink_config  # noqa: E402
from studio.export import processor_inputs as pi  # noqa: E402
from studio.export.batch_one import runs_at_batch_one  # noqa: E402
from studio.export.processor_source import load_processor  # noqa: E402


def test_a_forward_that_refuses_batch_two_gets_single_row_cases(tmp_path: Path) -> None:
    config = shrink_config(transformers.TvpConfig(num_frames=2))
    torch.manual_seed(0)
    model = transformers.TvpModel(config).eval()
    source = load_processor(tmp_path, config.to_dict())
    assert source is not None
    params = [n for n in inspect.signature(type(model).forward).parameters if n != "self"]
    der = pi.derive_inputs(model, source, config.to_dict(), {"vision"}, params, at_batch_one=runs_at_batch_one)
    assert der.static == "batch"
    assert [r.tensors["pixel_values"].shape[:2] for r in der.runs] == [(1, 2)] * 3
    assert len({r.tensors["input_ids"].shape[1] for r in der.runs}) > 1  # the prompts still differ
    assert any(n.startswith("batch 1: TvpModel.forward refuses every prompt form at batch 2") for n in der.notes)
    from studio.export.input_axes import specs_from_runs

    specs = specs_from_runs(der.runs, params)
    assert all(0 not in s.dynamic_axes for s in specs)  # the batch axis is static

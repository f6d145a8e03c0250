"""SLA tier files through their schema: a bad one names the file, the line and the field; what the hand-written
reader took (numbers as text, a null cost section) still loads the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.telemetry.sla import load_tiers

TIER = "memory_max_pct: 90, bandwidth_jitter_pct: 5, power_fluctuation_pct: 5"


@pytest.mark.parametrize("text,line,field,says", [
    ("tiers:\n  X:\n    memory_max_pct: lots\n    bandwidth_jitter_pct: 1\n    power_fluctuation_pct: 1\n", 3,
     "tiers.X.memory_max_pct", "valid number"),
    ("tiers:\n  X: {bandwidth_jitter_pct: 1, power_fluctuation_pct: 1}\n", 2, "tiers.X.memory_max_pct",
     "'memory_max_pct' is required"),
    (f"tiers:\n  X: {{{TIER}, max_eror_pct: 1}}\n", 2, "tiers.X", "unknown keys ['max_eror_pct']"),
    (f"tiers:\n  X: {{{TIER}}}\ncost:\n  weights: {{memory: much}}\n", 4, "cost.weights.memory", "valid number"),
    ("schema_version: 1\n", 1, "tiers", "'tiers' is required"),
])
def test_bad_tier_file_names_line_and_field(tmp_path: Path, text: str, line: int, field: str, says: str) -> None:
    f = tmp_path / "tiers.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as ei:
        load_tiers(f)
    assert ei.value.offending == f"{f}:{line}: {field}", ei.value.offending
    assert says in ei.value.message and "studio schema sla" in (ei.value.hint or "")


def test_numbers_as_text_and_defaults(tmp_path: Path) -> None:
    f = tmp_path / "tiers.yaml"
    f.write_text(f"tiers:\n  1: {{{TIER}, max_cost: '0.5'}}\ncost:\n  reference_device: {{memory_bytes: 1.0e9}}\n")
    tiers, cost = load_tiers(f)
    assert tiers["1"].title == "1" and tiers["1"].max_cost == 0.5 and tiers["1"].max_error_pct is None
    assert cost.reference.memory_bytes == 1e9 and cost.reference.power_w == 15.0  # '1.0e9' is text to PyYAML
    assert cost.weights == {"memory": 0.4, "bandwidth": 0.35, "power": 0.25}
    shipped, _ = load_tiers()
    assert sorted(shipped) == ["L1", "L2", "L3"] and shipped["L1"].max_error_pct == 0.1

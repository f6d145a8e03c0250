"""The schema of an SLA tier file (studio/resources/sla/tiers.yaml, or `studio bench --tiers FILE`) as a pydantic
model; ``studio.telemetry.sla.load_tiers`` validates through it (an InputError names the file, line and field).
`studio schema sla` prints the JSON Schema.

Numbers are read as numbers or numeric text: PyYAML reads ``1.0e9`` (no sign in the exponent) as a string.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from studio.core.errors import InputError
from studio.core.resource_schema import ResourceModel, validate

WHAT = "SLA tier file"
HINT = ("compare with studio/resources/sla/tiers.yaml (`studio schema sla` prints the JSON Schema to check it "
        "with)")


class TierSpec(ResourceModel):
    """One tier's thresholds, checked per measurement window; a value exactly at a threshold passes."""

    title: str | None = Field(None, description="default: the tier's name")
    memory_max_pct: float = Field(description="memory in use (VRAM when the server reports a GPU), percent")
    bandwidth_jitter_pct: float = Field(description="relative std of the data rate across a window's ticks")
    power_fluctuation_pct: float = Field(description="relative std of power across a window's samples")
    max_error_pct: float | None = Field(None, description="failed requests in a window, percent")
    max_cost: float | None = Field(None, description="the three-way constraint cost's ceiling")
    max_ttft_p95_ms: float | None = Field(None, description="generate endpoints: time to first token, p95 (ms)")
    max_inter_token_p95_ms: float | None = Field(None, description="generate endpoints: inter-token latency, "
                                                 "p95 (ms)")


class ReferenceDeviceSpec(ResourceModel):
    name: str = "reference"
    memory_bytes: float = 8 * 2**30
    bandwidth_bytes_per_s: float = 1e9
    power_w: float = 15.0


class CostSpec(ResourceModel):
    """cost = sum of weight * measured / reference capacity, over memory, bandwidth and power."""

    weights: dict[str, float] | None = Field(None, description="default: memory 0.4, bandwidth 0.35, power 0.25")
    reference_device: ReferenceDeviceSpec | None = None


class TiersFile(ResourceModel):
    """SLA tiers (L1 real-time, L2 batch, L3 offline, or your own) and the three-way constraint cost."""

    schema_version: Literal[1] = 1
    tiers: dict[str, TierSpec]
    cost: CostSpec | None = None

    @field_validator("tiers", mode="before")
    @classmethod
    def _names_as_text(cls, v: Any) -> Any:  # a tier named 1 is "1"
        return {str(k): t for k, t in v.items()} if isinstance(v, dict) else v


def parse(data: Any, path: Path | str, text: str | None = None) -> TiersFile:
    """Validate one tier file's mapping (``text``: its YAML, for line numbers in errors)."""
    return validate(TiersFile, data, path=path, text=text, error_cls=InputError, what=WHAT, hint=HINT)

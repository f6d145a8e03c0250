"""SLA verdicts on synthetic series at and around each threshold, the cost model and compliance."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from studio.core.errors import InputError
from studio.telemetry.sla import (
    FAIL,
    NA,
    PASS,
    CostModel,
    LatencyBudget,
    ReferenceDevice,
    WindowMeasures,
    get_tier,
    judge_window,
    load_tiers,
    relative_deviation_pct,
    summarise,
)

SEED = {"L1": (92, 3.5, 5), "L2": (96, 8, 12), "L3": (99, 15, 20)}


def series_with_deviation(pct: float, n: int = 8, mean: float = 1000.0) -> list[float]:
    """n values alternating mean*(1 +- pct/100): relative standard deviation is exactly pct."""
    return [mean * (1 + (pct / 100.0 if i % 2 else -pct / 100.0)) for i in range(n)]


def check(v, name):  # type: ignore[no-untyped-def]
    return next(c for c in v.checks if c.name == name)


def test_shipped_tiers_are_the_seed_defaults() -> None:
    tiers, cost = load_tiers()
    assert set(tiers) == {"L1", "L2", "L3"}
    for name, (mem, bw, pw) in SEED.items():
        t = tiers[name]
        assert (t.memory_max_pct, t.bandwidth_jitter_pct, t.power_fluctuation_pct) == (mem, bw, pw)
    assert cost.weights == {"memory": 0.4, "bandwidth": 0.35, "power": 0.25}


@pytest.mark.parametrize("tier_name", ["L1", "L2", "L3"])
@pytest.mark.parametrize("delta,expect", [(-0.01, PASS), (0.0, PASS), (0.01, FAIL)])
def test_memory_threshold(tier_name: str, delta: float, expect: str) -> None:
    tier, cost = get_tier(tier_name)
    m = WindowMeasures(memory_pct=tier.memory_max_pct + delta, requests=10)
    v = judge_window(m, tier, LatencyBudget(), cost)
    assert check(v, "memory").status == expect
    assert v.verdict == expect


@pytest.mark.parametrize("tier_name", ["L1", "L2", "L3"])
@pytest.mark.parametrize("delta,expect", [(-0.05, PASS), (0.0, PASS), (0.05, FAIL)])
def test_bandwidth_jitter_threshold(tier_name: str, delta: float, expect: str) -> None:
    tier, cost = get_tier(tier_name)
    target = tier.bandwidth_jitter_pct + delta
    bw = series_with_deviation(target)
    assert relative_deviation_pct(bw) == pytest.approx(target)
    if delta == 0.0:  # exactly at the limit (up to float rounding of the computed deviation)
        bw = series_with_deviation(target * (1 - 1e-9))
    v = judge_window(WindowMeasures(bandwidth_bytes_per_s=bw), tier, LatencyBudget(), cost)
    assert check(v, "bandwidth_jitter").status == expect


@pytest.mark.parametrize("tier_name", ["L1", "L2", "L3"])
@pytest.mark.parametrize("delta,expect", [(-0.05, PASS), (0.0, PASS), (0.05, FAIL)])
def test_power_fluctuation_threshold(tier_name: str, delta: float, expect: str) -> None:
    tier, cost = get_tier(tier_name)
    pw = series_with_deviation((tier.power_fluctuation_pct + delta) * (1 - 1e-9), mean=10.0)
    v = judge_window(WindowMeasures(power_w=pw), tier, LatencyBudget(), cost)
    assert check(v, "power_fluctuation").status == expect


@pytest.mark.parametrize("which", ["p95", "p99"])
@pytest.mark.parametrize("value,expect", [(9.99, PASS), (10.0, PASS), (10.01, FAIL)])
def test_latency_budgets(which: str, value: float, expect: str) -> None:
    tier, cost = get_tier("L2")
    budget = LatencyBudget(p95_ms=10.0) if which == "p95" else LatencyBudget(p99_ms=10.0)
    m = WindowMeasures(p95_ms=value if which == "p95" else 1.0, p99_ms=value if which == "p99" else 1.0,
                       requests=100)
    v = judge_window(m, tier, budget, cost)
    assert check(v, f"latency_{which}").status == expect
    assert v.verdict == expect


def test_missing_sources_are_not_available_not_zero() -> None:
    tier, cost = get_tier("L1")
    v = judge_window(WindowMeasures(p99_ms=5.0, requests=10), tier, LatencyBudget(p99_ms=10.0), cost)
    assert check(v, "power_fluctuation").status == NA and check(v, "power_fluctuation").value is None
    assert check(v, "memory").status == NA
    assert v.verdict == PASS  # judged on what could be measured
    nothing = judge_window(WindowMeasures(), tier, LatencyBudget(), cost)
    assert nothing.verdict == NA


def test_errors_fail_the_window() -> None:
    tier, cost = get_tier("L1")  # max 0.1 % failed requests
    ok = judge_window(WindowMeasures(requests=1000, errors=1), tier, LatencyBudget(), cost)
    bad = judge_window(WindowMeasures(requests=1000, errors=2), tier, LatencyBudget(), cost)
    assert ok.verdict == PASS and bad.verdict == FAIL and bad.failed_checks == ["errors"]


def test_constraint_cost_weights_and_missing_terms() -> None:
    ref = ReferenceDevice("ref", memory_bytes=1000.0, bandwidth_bytes_per_s=100.0, power_w=10.0)
    model = CostModel({"memory": 0.4, "bandwidth": 0.35, "power": 0.25}, ref)
    tier, _ = get_tier("L3")
    full = WindowMeasures(memory_used_bytes=500.0, bandwidth_bytes_per_s=[50.0, 50.0], power_w=[5.0, 5.0])
    v = judge_window(full, tier, LatencyBudget(), model)
    assert v.cost == pytest.approx(0.4 * 0.5 + 0.35 * 0.5 + 0.25 * 0.5)
    assert v.cost_missing == []
    no_power = WindowMeasures(memory_used_bytes=1000.0, bandwidth_bytes_per_s=[0.0, 0.0])
    v2 = judge_window(no_power, tier, LatencyBudget(), model)
    assert v2.cost_missing == ["power"]
    assert v2.cost == pytest.approx(0.4 / 0.75 * 1.0)  # weights rescaled over the terms present


def test_compliance_summary() -> None:
    tier, cost = get_tier("L2")
    budget = LatencyBudget(p99_ms=10.0)
    vs = [judge_window(WindowMeasures(p99_ms=p, requests=10), tier, budget, cost, window=i)
          for i, p in enumerate([5, 6, 11, 7, 12, 8, 9, 4])]
    vs.append(judge_window(WindowMeasures(), tier, LatencyBudget(), cost))  # nothing judged: not counted
    s = summarise(vs, tier, budget)
    assert (s.windows, s.judged, s.passed) == (9, 8, 6)
    assert s.compliance_pct == pytest.approx(75.0) and s.verdict == FAIL
    assert s.failures_by_check == {"latency_p99": 2}
    assert summarise(vs, tier, budget, required_pct=75.0).verdict == PASS


def test_relative_deviation_edge_cases() -> None:
    assert relative_deviation_pct([5.0]) is None
    assert relative_deviation_pct([0.0, 0.0]) == 0.0
    assert math.isinf(relative_deviation_pct([-1.0, 1.0]) or 0.0)


def test_bad_tier_file_and_unknown_tier(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown SLA tier"):
        get_tier("L9")
    bad = tmp_path / "t.yaml"
    bad.write_text("tiers:\n  X: {memory_max_pct: lots, bandwidth_jitter_pct: 1, power_fluctuation_pct: 1}\n")
    with pytest.raises(InputError) as ei:
        load_tiers(bad)
    assert "memory_max_pct" in str(ei.value.offending)

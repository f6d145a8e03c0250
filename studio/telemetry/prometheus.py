"""The one reader of the Prometheus text exposition format (what Triton's and the agent's /metrics serve).

Parsing is ``prometheus_client.parser``'s (escapes, UTF-8 label values, ``+Inf``/``NaN``, timestamps); this
module flattens its families into the studio's :class:`Metric` samples, gives counters back the names the
server exposed, and turns the parser's bare ``ValueError`` into an :class:`InputError` naming the line.
``studio.telemetry.collectors`` and ``studio.triton.metrics`` both read metrics through it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from studio.core.errors import InputError

_HINT = "the metrics endpoint does not serve the Prometheus text format (is the URL the metrics port?)"


@dataclass(frozen=True)
class Metric:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    value: float = 0.0


class _Lines:
    """The text's lines, one at a time, remembering where the parser is (for the error) and which names a
    ``# TYPE NAME counter`` line declared (prometheus_client renames those samples to ``NAME_total``)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.number = 0
        self.counters: set[str] = set()

    def __iter__(self) -> Iterator[str]:
        for number, line in enumerate(self.lines, 1):
            self.number = number
            if line.lstrip().startswith("# TYPE"):
                parts = line.split(None, 3)
                if len(parts) == 4 and parts[3].strip() == "counter":
                    self.counters.add(parts[2].strip('"'))
            yield line


def parse_prometheus_text(text: str) -> list[Metric]:
    """All samples in a text exposition, in order; HELP/TYPE and other comments are skipped, timestamps
    ignored. A line the format does not allow raises :class:`InputError` naming its number and text."""
    from prometheus_client.parser import text_fd_to_metric_families  # ~50 ms: only when metrics are read

    lines = _Lines(text)
    out: list[Metric] = []
    try:
        for fam in text_fd_to_metric_families(iter(lines)):  # type: ignore[arg-type]
            munged = fam.type == "counter" and fam.name in lines.counters
            for s in fam.samples:
                name = s.name[:-6] if munged and s.name.endswith("_total") else s.name
                out.append(Metric(name=name, labels=dict(s.labels), value=float(s.value)))
    except (ValueError, IndexError) as exc:
        line = lines.lines[lines.number - 1] if lines.number else ""
        why = str(exc).strip() or "not a sample, HELP or TYPE line"
        raise InputError(f"line {lines.number} of the metrics is not in the Prometheus text format: {why}",
                         offending=f"line {lines.number}: {line.strip()[:200]}", hint=_HINT) from exc
    return out


def metric_sum(metrics: list[Metric], name: str, **match: str) -> float | None:
    """Sum of every sample of ``name`` whose labels include ``match``; None when the metric is absent."""
    found = [m.value for m in metrics if m.name == name and all(m.labels.get(k) == v for k, v in match.items())]
    return math.fsum(found) if found else None


def by_name(metrics: list[Metric]) -> dict[str, list[Metric]]:
    """Metric name -> its samples, in order."""
    out: dict[str, list[Metric]] = {}
    for m in metrics:
        out.setdefault(m.name, []).append(m)
    return out

"""Parser for the Prometheus text exposition format (what Triton's and the agent's /metrics serve)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from studio.core.errors import InputError


@dataclass(frozen=True)
class Metric:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    value: float = 0.0


def _parse_labels(text: str, line: str) -> tuple[dict[str, str], int]:
    """Parse ``{a="x",b="y"}`` starting at text[0] == '{'; returns labels and the index after '}'."""
    labels: dict[str, str] = {}
    i = 1
    n = len(text)
    while i < n:
        while i < n and text[i] in " ,":
            i += 1
        if i < n and text[i] == "}":
            return labels, i + 1
        eq = text.find("=", i)
        if eq < 0 or eq + 1 >= n or text[eq + 1] != '"':
            raise InputError("malformed Prometheus label set", offending=line[:200],
                             hint="the metrics endpoint does not serve the Prometheus text format")
        key = text[i:eq].strip()
        j = eq + 2
        buf: list[str] = []
        while j < n and text[j] != '"':
            if text[j] == "\\" and j + 1 < n:
                nxt = text[j + 1]
                buf.append({"n": "\n", "\\": "\\", '"': '"'}.get(nxt, nxt))
                j += 2
            else:
                buf.append(text[j])
                j += 1
        labels[key] = "".join(buf)
        i = j + 1
    raise InputError("unterminated Prometheus label set", offending=line[:200])


def _parse_value(token: str) -> float:
    t = token.strip()
    if t in ("+Inf", "Inf"):
        return math.inf
    if t == "-Inf":
        return -math.inf
    if t == "NaN":
        return math.nan
    return float(t)


def parse_prometheus_text(text: str) -> list[Metric]:
    """All samples in a text exposition; comments (HELP/TYPE) are skipped, timestamps ignored."""
    out: list[Metric] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        brace = line.find("{")
        space = line.find(" ")
        if brace >= 0 and (space < 0 or brace < space):
            name = line[:brace]
            labels, end = _parse_labels(line[brace:], line)
            rest = line[brace + end:].split()
        else:
            parts = line.split()
            name, labels, rest = parts[0], {}, parts[1:]
        if not rest:
            raise InputError("Prometheus sample without a value", offending=line[:200])
        try:
            value = _parse_value(rest[0])
        except ValueError as exc:
            raise InputError(f"bad Prometheus sample value {rest[0]!r}", offending=line[:200]) from exc
        out.append(Metric(name=name, labels=labels, value=value))
    return out


def metric_sum(metrics: list[Metric], name: str, **match: str) -> float | None:
    """Sum of every sample of ``name`` whose labels include ``match``; None when the metric is absent."""
    found = [m.value for m in metrics if m.name == name and all(m.labels.get(k) == v for k, v in match.items())]
    return math.fsum(found) if found else None

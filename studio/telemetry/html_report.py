"""HTML report of a recording: level table, SLA verdicts and hand-built SVG plots (no Qt, no plotting lib)."""

from __future__ import annotations

import html
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from studio.telemetry import samples as S
from studio.telemetry.recording import Recording
from studio.telemetry.ringbuffer import decimate

MAX_POINTS = 800  # per polyline: min/max-decimated (the same decimator as the Dashboards' curves)
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]


def _nice_max(v: float) -> float:
    if v <= 0 or not math.isfinite(v):
        return 1.0
    mag = 10 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if v <= m * mag:
            return m * mag
    return 10 * mag


def svg_line_chart(series: dict[str, tuple[list[float], list[float]]], title: str, unit: str = "",
                   thresholds: Sequence[tuple[float, str]] = (), shade: Sequence[tuple[float, float]] = (),
                   width: int = 760, height: int = 230, note: str = "",
                   x_range: tuple[float, float] | None = None) -> str:
    """A static line chart: x in seconds from the start, one polyline per series, dashed threshold lines,
    red bands for shaded (violating) spans. Empty series render a 'not available' panel, never a flat zero."""
    ml, mr, mt, mb = 60, 150, 28, 32
    pw, ph = width - ml - mr, height - mt - mb
    esc = html.escape
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
             f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>',
             f'<text x="{ml}" y="17" font-size="13" font-weight="bold">{esc(title)}</text>']
    pts = [(x, y) for xs, ys in series.values() for x, y in zip(xs, ys, strict=True) if y is not None]
    if not pts:
        parts.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#f4f4f4" stroke="#ccc"/>')
        parts.append(f'<text x="{ml + pw / 2}" y="{mt + ph / 2}" text-anchor="middle" fill="#666">'
                     f'not available{(": " + esc(note)) if note else ""}</text></svg>')
        return "".join(parts)
    x0, x1 = x_range if x_range else (min(p[0] for p in pts), max(p[0] for p in pts))
    x1 = x1 if x1 > x0 else x0 + 1
    ymax = _nice_max(max([p[1] for p in pts] + [t[0] for t in thresholds]) * 1.05)

    def X(x: float) -> float:  # noqa: N802
        return ml + max(0.0, min(1.0, (x - x0) / (x1 - x0))) * pw

    def Y(y: float) -> float:  # noqa: N802
        return mt + ph - max(0.0, min(y, ymax)) / ymax * ph

    parts.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="#fcfcfc" stroke="#bbb"/>')
    for a, b in shade:
        xa, xb = X(max(a, x0)), X(min(b, x1))
        if xb > xa:
            parts.append(f'<rect x="{xa:.1f}" y="{mt}" width="{xb - xa:.1f}" height="{ph}" fill="#d62728" '
                         f'fill-opacity="0.12"/>')
    for i in range(5):
        yv = ymax * i / 4
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{Y(yv):.1f}" y2="{Y(yv):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{ml - 4}" y="{Y(yv) + 4:.1f}" text-anchor="end">{yv:.4g}</text>')
    for i in range(6):
        xv = x0 + (x1 - x0) * i / 5
        parts.append(f'<text x="{X(xv):.1f}" y="{mt + ph + 14}" text-anchor="middle">{xv - x0:.0f}s</text>')
    if unit:
        parts.append(f'<text x="12" y="{mt + ph / 2}" transform="rotate(-90 12 {mt + ph / 2})" '
                     f'text-anchor="middle">{esc(unit)}</text>')
    for (yv, label) in thresholds:
        parts.append(f'<line x1="{ml}" x2="{ml + pw}" y1="{Y(yv):.1f}" y2="{Y(yv):.1f}" stroke="#d62728" '
                     f'stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{ml + pw - 4}" y="{Y(yv) - 3:.1f}" text-anchor="end" fill="#d62728">'
                     f'{esc(label)}</text>')
    for k, (name, (xs, ys)) in enumerate(series.items()):
        color = COLORS[k % len(COLORS)]
        dx, dy = decimate(np.array([x for x, y in zip(xs, ys, strict=True) if y is not None], dtype=np.float64),
                          np.array([y for y in ys if y is not None], dtype=np.float64), MAX_POINTS)
        if len(dx):
            poly = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(dx, dy, strict=True))
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{poly}"/>')
        ly = mt + 12 + 16 * k
        parts.append(f'<line x1="{ml + pw + 10}" x2="{ml + pw + 26}" y1="{ly - 4}" y2="{ly - 4}" '
                     f'stroke="{color}" stroke-width="2"/>')
        parts.append(f'<text x="{ml + pw + 30}" y="{ly}">{esc(name)}{"" if len(dx) else " (n/a)"}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _xy(samples: list[S.Sample]) -> tuple[list[float], list[float]]:
    av = [s for s in samples if s.value is not None]
    return [s.t for s in av], [float(s.value) for s in av]  # type: ignore[arg-type]


def _na_note(samples: list[S.Sample]) -> str:
    notes = {s.note.removeprefix(S.NOT_AVAILABLE + ": ") for s in samples if s.value is None and s.note}
    return "; ".join(sorted(notes))[:160]


def _fmt(v: Any, nd: int = 2) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return html.escape(str(v))


def render_html(rec: Recording) -> str:
    """The whole report as one self-contained HTML page."""
    meta = rec.meta
    cfg = meta.get("config") or {}
    report = meta.get("report") or {}
    sla = report.get("sla")
    esc = html.escape
    body: list[str] = [f"<h1>Load run: {esc(str(meta.get('target', '')))}</h1>"]
    started = report.get("started") or meta.get("created")
    body.append(f"<p>URL {esc(str(cfg.get('url', '')))}, model {esc(str(cfg.get('model', '')))}, mode "
                f"{esc(str(report.get('mode', '')))}, started "
                f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(started)) if started else 'n/a'}; "
                f"recording {esc(str(rec.path))}</p>")
    if sla:
        ok = sla.get("verdict") == "pass"
        pct = sla.get("compliance_pct")
        body.append(f'<p class="{"pass" if ok else "fail"}"><b>SLA {esc(sla["tier"])}: '
                    f'{esc(sla["verdict"].upper())}</b> — compliance {_fmt(pct, 1)}% of {sla["judged"]} judged '
                    f'window(s), required {sla["required_pct"]:g}%. Budget p95 '
                    f'{_fmt(sla["budget"].get("p95_ms"))} ms, p99 {_fmt(sla["budget"].get("p99_ms"))} ms.</p>')
    body.append("<h2>Levels</h2><table><tr><th>level</th><th>req/s</th><th>p50</th><th>p90</th><th>p95</th>"
                "<th>p99</th><th>p99.9</th><th>max</th><th>errors</th><th>server queue (us)</th>"
                "<th>server compute (us)</th><th>stable</th></tr>")
    for lv in rec.levels():
        lat = lv.get("latency", {})
        b = lv.get("server_breakdown_us") or {}
        errs = ", ".join(f"{k}={v}" for k, v in (lv.get("errors") or {}).items()) or "0"
        body.append(f"<tr><td>{esc(lv['label'])}</td><td>{_fmt(lv.get('throughput_rps'), 1)}</td>"
                    + "".join(f"<td>{_fmt(lat.get(k))}</td>" for k in ("p50_ms", "p90_ms", "p95_ms", "p99_ms",
                                                                        "p999_ms", "max_ms"))
                    + f"<td>{esc(errs)}</td><td>{_fmt(b.get('queue_us'), 1)}</td>"
                      f"<td>{_fmt(b.get('compute_infer_us'), 1)}</td><td>{'yes' if lv.get('stable') else 'no'}</td>"
                      "</tr>")
        if lv.get("aborted"):
            body.append(f'<tr><td colspan="12" class="fail">ended early: {esc(lv["aborted"])}</td></tr>')
    body.append("</table><p>Latency in ms.</p>")

    verdicts = rec.verdicts()
    fail_spans = [(v["start"], v["end"]) for v in verdicts if v.get("verdict") == "fail"]
    budget = (sla or {}).get("budget") or {}
    th = [(budget["p95_ms"], "p95 budget")] if budget.get("p95_ms") else []
    th += [(budget["p99_ms"], "p99 budget")] if budget.get("p99_ms") else []
    plots: list[str] = []
    all_t = [s.t for s in rec.samples(S.THROUGHPUT)]
    xr = (min(all_t), max(all_t)) if all_t else None
    for target in rec.targets():
        def get(series: str, target: str = target) -> list[S.Sample]:
            return rec.samples(series, target)

        lat = {name.split(".")[1].removesuffix("_ms"): _xy(get(name)) for name in
               (S.LAT_P50, S.LAT_P90, S.LAT_P95, S.LAT_P99)}
        plots.append(svg_line_chart(lat, f"Latency percentiles — {target}", "ms", th, fail_spans, x_range=xr))
        plots.append(svg_line_chart({"client": _xy(get(S.THROUGHPUT)), "server": _xy(get(S.SERVER_RPS))},
                                    f"Throughput — {target}", "req/s", (), fail_spans, x_range=xr))
        mem = {"memory %": _xy(get(S.MEM_PCT)), "GPU memory %": _xy(get(S.GPU_MEM_PCT))}
        plots.append(svg_line_chart(mem, f"Memory / VRAM — {target}", "%", (), fail_spans,
                                    note=_na_note(get(S.GPU_MEM_PCT) + get(S.MEM_PCT)), x_range=xr))
        pw = {"GPU power": _xy(get(S.GPU_POWER)), "board power": _xy(get(S.BOARD_POWER))}
        plots.append(svg_line_chart(pw, f"Power — {target}", "W", (), fail_spans,
                                    note=_na_note(get(S.GPU_POWER) + get(S.BOARD_POWER)), x_range=xr))
        comp = _xy(get(S.SLA_COMPLIANCE))
        if comp[0]:
            plots.append(svg_line_chart({"compliance": comp}, f"SLA compliance — {target}", "%",
                                        [(float(sla["required_pct"]), "required")] if sla else [], x_range=xr))
    body.append("<h2>Plots</h2><p>Red bands: windows that failed the SLA.</p>" + "".join(
        f'<div class="plot">{p}</div>' for p in plots))
    if verdicts:
        body.append("<h2>Window verdicts</h2><table><tr><th>#</th><th>verdict</th><th>failed checks</th>"
                    "<th>cost</th><th>checks</th></tr>")
        for v in verdicts:
            checks = "; ".join(f"{c['name']} {c['status']}"
                               + (f" ({_fmt(c['value'])} / {_fmt(c['limit'])} {c['unit']})"
                                  if c["value"] is not None else "") for c in v["checks"])
            failed = ", ".join(c["name"] for c in v["checks"] if c["status"] == "fail") or "-"
            body.append(f'<tr><td>{v["window"]}</td><td class="{v["verdict"].split()[0]}">{esc(v["verdict"])}</td>'
                        f"<td>{esc(failed)}</td><td>{_fmt(v.get('cost'), 4)}</td><td>{esc(checks)}</td></tr>")
        body.append("</table>")
    sources = meta.get("sources") or {}
    if sources:
        body.append("<h2>Sources</h2><table><tr><th>series</th><th>source</th></tr>" + "".join(
            f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in sources.items()) + "</table>")
    style = ("body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:12px}"
             "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#f0f0f0}"
             "td:first-child{text-align:left}.pass{color:#2a7a2a}.fail{color:#c62828}.plot{margin:8px 0}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>studio load run</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>\n")

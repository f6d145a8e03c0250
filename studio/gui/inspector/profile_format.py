"""Profile numbers as the inspector shows them: milliseconds, node statuses, the heat ramp (shared with the graph
view's colours), the Node panel's timing line and the before/after table of a fix.

Plain functions from ProfileReport / ProfileComparison to text and Qt rich text, so the widgets stay thin.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QLinearGradient, QPainter, QPen, QPixmap

from studio.gui.graph import palette

translate = QCoreApplication.translate

# source strings; status_label() translates them where they are drawn
STATUS_LABEL = {"measured": QT_TRANSLATE_NOOP("ProfileFormat", "measured"),
                "fused": QT_TRANSLATE_NOOP("ProfileFormat", "fused"),
                "folded": QT_TRANSLATE_NOOP("ProfileFormat", "folded"),
                "removed": QT_TRANSLATE_NOOP("ProfileFormat", "removed"),
                "not-run": QT_TRANSLATE_NOOP("ProfileFormat", "not run")}


def status_label(status: str) -> str:
    """A node status as the current language says it (unknown statuses as they are)."""
    return translate("ProfileFormat", STATUS_LABEL[status]) if status in STATUS_LABEL else status


def status_text(nt: Any, names: dict[str, str] | None = None) -> str:
    """'measured', 'fused into X', 'folded', ... as the table shows it."""
    if nt.status == "fused" and nt.fused_into:
        return translate("ProfileFormat", "fused into {node}").format(
            node=(names or {}).get(nt.fused_into, nt.fused_into))
    text = status_label(nt.status)
    if nt.status == "measured" and nt.ort_op:
        text += translate("ProfileFormat", " (as {op})").format(op=nt.ort_op)
    return text


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "—"
    if v >= 100:
        return f"{v:,.1f}"
    if v >= 1:
        return f"{v:.3f}"
    return f"{v:.4f}"


def heat_colour(value: float, top: float) -> str:
    """The ramp colour the graph uses for ``value`` on a scale up to ``top``."""
    ramp = palette.heat_ramp(10)
    if top <= 0:
        return ramp[0]
    return ramp[min(9, int(max(0.0, value) / top * 9.999))]


def heat_legend_pixmap(width: int = 140, height: int = 10) -> QPixmap:
    pm = QPixmap(width, height)
    pm.fill(Qt.GlobalColor.transparent)
    p = QPainter(pm)
    grad = QLinearGradient(0, 0, width, 0)
    ramp = palette.heat_ramp(10)
    for i, c in enumerate(ramp):
        grad.setColorAt(i / (len(ramp) - 1), QColor(c))
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    p.setPen(QPen(QColor("#8c96a5"), 0.8))
    p.setBrush(QBrush(grad))
    p.drawRoundedRect(QRectF(0.5, 0.5, width - 1, height - 1), 3, 3)
    p.end()
    return pm


def _muted(theme: str) -> str:
    return palette.TEXT[theme][1]


def node_time_html(nt: Any, rep: Any, theme: str = "light", names: dict[str, str] | None = None) -> str:
    """The node's profiled time for the Node details panel."""
    muted = _muted(theme)
    if nt.mean_ms > 0:
        colour = heat_colour(nt.share, max((n.share for n in rep.nodes), default=0.0))
        ink = "#ffffff" if QColor(colour).lightness() < 150 else palette.TEXT["light"][0]
        chip = (f"<span style='background:{colour}; color:{ink}; font-weight:600'>"
                f"&nbsp;{fmt_ms(nt.mean_ms)} ms&nbsp;</span>")
        line = translate("ProfileFormat", "{chip} mean · {p95} ms p95 · {share} of node time"
                                          " · {calls} kernel call(s) per run").format(
            chip=chip, p95=fmt_ms(nt.p95_ms), share=f"<b>{100 * nt.share:.1f}%</b>", calls=f"{nt.calls:g}")
    else:
        line = f"<b>0 ms</b> · {escape(status_text(nt, names))}"
    extra = f"<br><span style='color:{muted}'>{escape(nt.reason)}</span>" if nt.reason else ""
    module = (f"<br><span style='color:{muted}'>"
              + translate("ProfileFormat", "module {name}").format(name=escape(nt.module)) + "</span>"
              if nt.module else "")
    head = translate("ProfileFormat", "Profiled time ({runs} runs):").format(runs=rep.runs)
    return (f"<p style='margin:4px 0 2px 0'><span style='color:{muted}'>{head}</span> {line}{extra}{module}</p>")


def comparison_html(c: Any, theme: str = "light", top: int = 15) -> str:
    """Before/after of a fix from studio.profiling's ProfileComparison: total, per scope and per node."""
    ok, bad = ("#1a7f37", "#cf222e") if theme == "light" else ("#3fb950", "#f85149")
    text, muted = palette.TEXT[theme]
    border = "#d0d7de" if theme == "light" else "#3a414b"

    def delta(d: float, before: float | None, after: float | None = 0.0) -> str:
        if abs(d) < 1e-9:
            return f"<span style='color:{muted}'>±0</span>"
        if after is None:
            note = translate("ProfileFormat", " gone")
        elif before is None:
            note = translate("ProfileFormat", " new")
        else:
            note = f" ({100 * d / before:+.0f}%)" if before else ""
        return f"<b style='color:{ok if d < 0 else bad}'>{d:+.4f}</b><span style='color:{muted}'>{note}</span>"

    out = [f"<style>body {{ color: {text}; }} table.t {{ border-collapse: collapse; }}"
           f" table.t td, table.t th {{ border-bottom: 1px solid {border}; padding: 2px 6px 2px 0; }}"
           f" table.t th {{ color: {muted}; text-align: left; font-weight: 600; }}"
           f" .mono {{ font-family: 'DejaVu Sans Mono', monospace; }}</style>"]
    out.append(f"<p style='font-weight:600; font-size:11pt; margin:0'>{escape(Path(c.before).name)} → "
               f"{escape(Path(c.after).name)}</p>")
    ratio = f" · ×{c.run_ratio:.2f}" if c.run_ratio else ""
    run = translate("ProfileFormat", "Run time {before} → {after} ms ({delta} ms{ratio})").format(
        before=fmt_ms(c.run_before_ms), after=f"<b>{fmt_ms(c.run_after_ms)}</b>",
        delta=delta(c.run_delta_ms, c.run_before_ms), ratio=ratio)
    nodes = translate("ProfileFormat", "Node time {before} → {after} ms · {gone} node(s) gone, {new} new").format(
        before=fmt_ms(c.node_total_before_ms), after=fmt_ms(c.node_total_after_ms), gone=len(c.only_before),
        new=len(c.only_after))
    out.append(f"<p style='margin:4px 0'>{run}<br>{nodes}</p>")
    for w in c.warnings:
        out.append(f"<p style='color:{bad}; margin:2px 0'>⚠ {escape(w)}</p>")
    for title, rows, what in ((translate("ProfileFormat", "By scope"), c.scopes, translate("ProfileFormat", "scope")),
                              (translate("ProfileFormat", "By node"), c.nodes, translate("ProfileFormat", "node"))):
        heads = (translate("ProfileFormat", "before ms"), translate("ProfileFormat", "after ms"), "Δ ms", what)
        out.append(f"<p style='font-weight:600; margin:8px 0 2px 0'>{title}</p><table class='t' width='100%'>"
                   "<tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>")
        for d in rows[:top]:
            op = d.op_before or d.op_after
            label = escape(d.key) + (f" <span style='color:{muted}'>{escape(op)}</span>" if op else "")
            out.append(f"<tr><td>{fmt_ms(d.before_ms)}</td><td>{fmt_ms(d.after_ms)}</td>"
                       f"<td>{delta(d.delta_ms, d.before_ms, d.after_ms)}</td><td class='mono'>{label}</td></tr>")
        out.append("</table>")
        if len(rows) > top:
            more = translate("ProfileFormat", "… {n} more").format(n=len(rows) - top)
            out.append(f"<p style='color:{muted}'>{more}</p>")
    return "".join(out)


__all__ = ["STATUS_LABEL", "status_label", "status_text", "fmt_ms", "heat_colour", "heat_legend_pixmap", "node_time_html",
           "comparison_html"]

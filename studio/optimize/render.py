"""The terminal reports of `studio fix` and of attention fusion (`studio fix --fuse-attention`), in the user's
language (studio.core.catalogue), as studio.inspect.render writes inspect's: the frames, labels, verdict words,
step lines and parity sentences translated; target ids, paths, numbers, op, node and tensor names, flags and tool
names as they are; English byte-for-byte as before. The reports themselves (their JSON) keep the English texts:
a step line or a finding's key is data, translated only here, where it is shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from studio.core.catalogue import N_, _, part, tr
from studio.core.columns import cell, clip
from studio.inspect.render import verdict_name

if TYPE_CHECKING:
    from studio.optimize.api import FixReport
    from studio.optimize.fusion import FusionReport

KEY_COLUMNS = 140  # a resolved / new finding's line is cut here (terminal columns)


def render_fix_text(rep: FixReport) -> str:
    lines = [tr("fixed {model} -> {output}", model=rep.model, output=rep.output)]
    for f in rep.files:
        lines.append(f"\n[{f.part}] {f.source} -> {f.output} ({f.precision})")
        lines += [f"  - {_(s)}" for s in f.steps]
        if f.host:
            lines.append(tr("  host graph (run before it, on the host): {host}", host=f.host))
        if f.calibration:
            lines.append(tr("  calibration samples as its inputs: {calibration}", calibration=f.calibration))
        if f.parity:
            lines.append(f.parity.summary_line(N_("parity"), "ORT"))
            if f.parity.dims_source:
                lines.append(tr("  parity inputs: {source}", source=dims_source_text(f.parity.dims_source)))
        if f.diff:
            d = f.diff
            lines.append(tr("  nodes {nodes_before} -> {nodes_after}   weights {bytes_before} -> {bytes_after} bytes   "
                            "dynamic origins {origins_before} -> {origins_after}", nodes_before=d.nodes_before,
                            nodes_after=d.nodes_after, bytes_before=d.initializer_bytes_before,
                            bytes_after=d.initializer_bytes_after, origins_before=len(d.dynamic_before),
                            origins_after=len(d.dynamic_after)))
            for tid, t in d.targets.items():
                lines.append(_target_line(tid, t) + "  " + tr("resolved {resolved}, introduced {introduced}",
                                                              resolved=len(t.resolved), introduced=len(t.introduced))
                             + _changed(t))
                lines += [f"      {cell(_('resolved:'), 9)} {finding_key_text(r)}" for r in t.resolved[:3]]
                lines += [f"      {cell(_('new:'), 9)} {finding_key_text(r)}" for r in t.introduced[:3]]
    return "\n".join(lines) + "\n"


def render_fusion_text(rep: FusionReport) -> str:
    lines = [tr("fused attention {model} -> {output}", model=rep.model, output=rep.output),
             "  " + tr("{count} subgraph(s) -> {domain}::{op}; nodes {nodes_before} -> {nodes_after}",
                       count=len(rep.sites), domain=rep.domain, op=rep.op, nodes_before=rep.nodes_before,
                       nodes_after=rep.nodes_after)]
    for s in rep.sites:
        extra = (_(", mask") if s.has_mask else "") + (", nan->0" if s.nan_to_zero else "")
        lines.append(f"  - {s.node}  " + tr("({count} nodes, key {key_format}, scale {scale}, heads {heads}{extra})",
                                            count=len(s.replaced), key_format=s.key_format, scale=f"{s.scale:.6g}",
                                            heads=s.num_heads or "?", extra=extra))
    if rep.parity:
        lines.append(rep.parity.summary_line(N_("parity vs unfused"), f"ORT + {_(rep.runtime)}", cosine_bound=False))
    if rep.diff is not None:
        for tid, t in rep.diff.targets.items():
            lines.append(_target_line(tid, t) + _changed(t))
            lines += [f"      {_('new:')} {finding_key_text(r)}" for r in t.introduced[:2]]
    return "\n".join(lines) + "\n"


def _target_line(tid: str, t: Any) -> str:
    """``  TARGET       BEFORE  -> AFTER  ``: the verdict words translated, the columns kept."""
    return f"  {tid:12} {cell(verdict_name(t.before), 7)} -> {cell(verdict_name(t.after), 7)}"


def _changed(t: Any) -> str:
    return "" if t.before == t.after else _("   <- changed")


def dims_source_text(text: str) -> str:
    """Where parity's input sizes came from (FixParity.dims_source: ``--static``'s sizes, then the processor files'
    sentence, joined by "; "), each part through its own template."""
    given, sep, derived = text.partition("; ")
    if sep and given.endswith(" from --static"):
        return tr("{given}; {derived}", given=_(given), derived=_(derived))
    return _(text)


def finding_key_text(key: str) -> str:
    """A finding of the before/after difference (``RULE: MESSAGE``, its identity in the report, English; studio.
    optimize.api.analysis_diff) with the message in the user's language, cut at :data:`KEY_COLUMNS` columns; the
    rule id, op and node names kept."""
    rule, sep, message = key.partition(": ")
    text = f"{rule}: {finding_message_text(message)}" if sep else _(key)
    return key[:KEY_COLUMNS] if text == key else clip(text, KEY_COLUMNS)


def finding_message_text(message: str) -> str:
    """A finding's message as the difference keeps it (studio.inspect.render.finding_message without the finding):
    ``OP: reason`` with the reason through its entry or template, a dynamic input's ``reason; why`` (its "(reaches N
    tensors)" left out of the key) each part through its own, else the whole through its template."""
    op, sep, reason = message.partition(": ")
    if sep and op and " " not in op:  # an op finding: "Conv: ..." (studio.inspect.render._op_text)
        said = _(reason)
        if said != reason:
            return f"{op}: {said}"
    said = _(message)
    if said != message:
        return said
    first, sep, rest = message.partition("; ")
    if sep:  # each part as a NESTED value is translated: its entry, or a template covering it
        a, b = part(first), part(rest)
        if (a, b) != (first, rest):
            return tr("{reason}; {why}", reason=a, why=b)
    return message

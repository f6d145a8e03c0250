"""`studio report RECORDING.sqlite --html [--output FILE]`: render a recorded load run."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("recording", type=Path, help="a recording written by `studio bench --record`")
    p.add_argument("--html", action="store_true", help="write an HTML report with plots")
    p.add_argument("--output", "-o", type=Path, default=None,
                   help="where to write the HTML (default: next to the recording, .html)")
    p.add_argument("--json", action="store_true", help="print the recorded report as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from studio.core.atomic import write_text_atomic
    from studio.telemetry.recording import Recording

    with Recording(args.recording) as rec:
        if args.html:
            from studio.telemetry.html_report import render_html

            out = args.output or args.recording.with_suffix(".html")
            write_text_atomic(out, render_html(rec))
            print(f"wrote {out}")
        if args.json:
            print(json.dumps({"meta": rec.meta, "levels": rec.levels(), "verdicts": rec.verdicts()}, indent=2))
        if not args.html and not args.json:
            rep = rec.meta.get("report") or {}
            sla = rep.get("sla")
            print(f"{rec.meta.get('target', '?')}: {len(rec.levels())} level(s), {len(rec.windows())} window(s), "
                  f"{len(rec.series())} series")
            for lv in rec.levels():
                lat = lv.get("latency", {})
                print(f"  {lv['label']:<18} {lv['throughput_rps']:9.1f} req/s  p50 {lat.get('p50_ms')} ms  "
                      f"p99 {lat.get('p99_ms')} ms  errors {lv.get('error_count', 0)}")
            if sla:
                print(f"  SLA {sla['tier']}: {sla['verdict']} ({sla.get('compliance_pct')}%)")
    return 0

"""What `studio triton build-repo` and `studio triton check` print (and the `multimodal-serve` alias's repository
lines), in the user's language (studio.core.catalogue): labels, the summary line and the severity words; model
names, kinds, flavors, paths and config field names as they are. The findings' own messages are the checker's
(English). English byte-for-byte as the commands printed it before.
"""

from __future__ import annotations

from typing import Any

from studio.core.catalogue import N_, _, tr
from studio.core.columns import cell

SEVERITY_WORDS = {"error": N_("error"), "warning": N_("warning"), "info": N_("info")}


def built_model_line(m: Any) -> str:
    """One model a build wrote: ``  NAME  KIND  FLAVOR  version N  PATH``."""
    return f"  {m.name:28} {m.kind:9} {m.flavor:12} " + tr("version {version}", version=m.version) + f"  {m.path}"


def build_text(report: Any) -> str:
    lines = [built_model_line(m) for m in report.models]
    lines += [tr("  warning: {warning}", warning=_(w)) for w in report.warnings]
    lines.append(tr("repository {repo}: call model '{model}'", repo=report.repo, model=report.entry_model))
    return "\n".join(lines) + "\n"


def finding_text(f: Any) -> str:
    """A check finding (studio.triton.repo_check.Finding.render's layout): the severity word, the hint's label, and
    the checker's message and hint (each its own N_ template in repo_check) translated; the file and the config
    field as they are. Every message and hint the checker writes has its own template (a path or name in it may be
    longer than its words, so a covering lookup would leave it English); the most specific template matches first."""
    s = f"{cell(_(SEVERITY_WORDS.get(f.severity, f.severity)), 7)} {f.file} [{f.field}]: {_(f.message)}"
    return s + ("\n        " + tr("hint: {hint}", hint=_(f.hint)) if f.hint else "")


def check_text(report: Any) -> str:
    lines = [f"  {m.name:28} {m.kind:18} " + tr("versions {versions}", versions=m.versions or "-")
             + f"  max_batch_size {m.max_batch_size}" for m in report.models]
    lines += [finding_text(f) for f in report.findings]
    n_err, n_warn = len(report.errors), sum(f.severity == "warning" for f in report.findings)
    lines.append(tr("{verdict}: {errors} error(s), {warnings} warning(s) in {repo}",
                    verdict=_(N_("OK") if report.ok else N_("FAILED")), errors=n_err, warnings=n_warn,
                    repo=report.repo))
    return "\n".join(lines) + "\n"

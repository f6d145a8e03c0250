"""What `studio package` reports: the bundle written, its verdict, signer, left-out files and warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from studio.core.catalogue import _, tr
from studio.core.reports import Report


@dataclass
class PackageReport(Report):
    bundle: str
    name: str
    version: str
    board: str
    target: str
    verdict: str
    forced: bool
    files: int
    total_bytes: int
    seconds: float
    signer_key_id: str
    served_models: list[str] = field(default_factory=list)
    runtime: str = "onnxruntime"  # "tvm" when the bundle serves a compiled module
    compiled: dict[str, Any] = field(default_factory=dict)  # library, kind, arch, TVM version, parity
    warnings: list[str] = field(default_factory=list)
    left_out: list[dict[str, Any]] = field(default_factory=list)  # files of the source not packed, and why
    openssf: dict[str, Any] = field(default_factory=dict)  # the OpenSSF signature written (--openssf-key)
    openssf_source: dict[str, Any] = field(default_factory=dict)  # the signature the source arrived with, checked
    schema_version: int = 1

    def render(self) -> str:
        text = tr("wrote {bundle}: {name} {version} for {board} (target {target}: {verdict}), {files} files, {mb} "
                  "MB, signed by {key}, {seconds} s; serves {models}", bundle=self.bundle, name=self.name,
                  version=self.version, board=self.board, target=self.target,
                  verdict=_(self.verdict) + (", " + _("FORCED") if self.forced else ""), files=self.files,
                  mb=f"{self.total_bytes / 1e6:.1f}", key=self.signer_key_id, seconds=f"{self.seconds:.2f}",
                  models=", ".join(self.served_models))
        if self.compiled:
            c = self.compiled
            par = c.get("parity") or {}
            what = (f"rknn ({c.get('toolkit')} {c.get('toolkit_version')}, {c.get('model')}, {c.get('platform')}, "
                    f"{c.get('dtype')})" if c.get("runtime") == "rknn" else
                    f"tvm {c.get('version')} ({c.get('library')}, {c.get('library_kind')}, {c.get('arch')})")
            text += "\n  " + tr("runtime: {what}; parity vs ONNX Runtime ({mode}): {status}", what=what,
                                  mode=par.get("mode") or "compile", status=_(par.get("status") or ""))
            text += tr(", max abs {value}", value=f"{par['max_abs']:.3g}") if par.get("max_abs") is not None else ""
        if self.openssf_source:
            text += "\n  " + tr("source: OpenSSF signature by {signer} verified ({trusted})",
                                signer=self.openssf_source.get("signer"), trusted=self.openssf_source.get("trusted_by"))
        if self.openssf:
            text += "\n  " + tr("OpenSSF: model/ signed by {signer} into {file} ({files} files; `{command}` in the "
                                "extracted bundle)", signer=self.openssf.get("signer"), file=self.openssf.get("file"),
                                files=self.openssf.get("files"),
                                command="model_signing verify key --signature model.sig --public_key KEY.pub model")
        return text + "".join("\n  " + tr("warning: {message}", message=w) for w in self.warnings)

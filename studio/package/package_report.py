"""What `studio package` reports: the bundle written, its verdict, signer, left-out files and warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
        text = (f"wrote {self.bundle}: {self.name} {self.version} for {self.board} "
                f"(target {self.target}: {self.verdict}{', FORCED' if self.forced else ''}), {self.files} files, "
                f"{self.total_bytes / 1e6:.1f} MB, signed by {self.signer_key_id}, {self.seconds:.2f} s; "
                f"serves {', '.join(self.served_models)}")
        if self.compiled:
            c = self.compiled
            par = c.get("parity") or {}
            what = (f"rknn ({c.get('toolkit')} {c.get('toolkit_version')}, {c.get('model')}, {c.get('platform')}, "
                    f"{c.get('dtype')})" if c.get("runtime") == "rknn" else
                    f"tvm {c.get('version')} ({c.get('library')}, {c.get('library_kind')}, {c.get('arch')})")
            text += (f"\n  runtime: {what}; parity vs ONNX Runtime ({par.get('mode') or 'compile'}): "
                     f"{par.get('status')}"
                     + (f", max abs {par['max_abs']:.3g}" if par.get("max_abs") is not None else ""))
        if self.openssf_source:
            text += f"\n  source: OpenSSF signature by {self.openssf_source.get('signer')} verified " \
                    f"({self.openssf_source.get('trusted_by')})"
        if self.openssf:
            text += (f"\n  OpenSSF: model/ signed by {self.openssf.get('signer')} into {self.openssf.get('file')} "
                     f"({self.openssf.get('files')} files; `model_signing verify key --signature model.sig "
                     "--public_key KEY.pub model` in the extracted bundle)")
        return text + "".join(f"\n  warning: {w}" for w in self.warnings)

"""The ONNX Runtime verifier: a real ``InferenceSession`` with the chosen providers (default CPU).

The session builds: every node is supported (ORT placed a kernel or inlined a function for each). It fails:
the message names the first node ORT could not place; every node is then built alone as a one-node session
(``attribution.check_each_node``) so each gets ORT's own verdict and words.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.verify.api import VerifyResult, importable
from studio.verify.attribution import note_model_level, whole_then_each

DEFAULT_PROVIDERS = ("CPUExecutionProvider",)


@dataclass
class OrtVerifier:
    """``verify`` builds a real session; ``providers`` are tried in order like ORT's own list."""

    name: str = "ort-cpu"
    target: str = "ort-cpu"
    providers: list[str] = field(default_factory=lambda: list(DEFAULT_PROVIDERS))

    def available(self) -> tuple[bool, str]:
        import importlib.metadata as md

        if not importable("onnxruntime"):
            return False, N_("onnxruntime is not installed (python3 -m pip install onnxruntime)")
        return True, f"onnxruntime {md.version('onnxruntime')}"

    def tool(self) -> str:
        import onnxruntime

        return f"onnxruntime {onnxruntime.__version__} ({', '.join(self.providers)})"

    def _session(self, model: str | bytes) -> str:
        """"" when a session builds, else ORT's message."""
        from studio.core.runner import ort_session, session_options

        try:  # ORT's own words are the verdict: error=None keeps its exception
            ort_session(model, session_options(log_level=4), list(self.providers), error=None)
        except Exception as exc:  # ORT raises its own types (Fail, NotImplemented, InvalidGraph, ...)
            return str(exc)
        return ""

    def check_proto(self, proto: Any) -> str:
        return self._session(proto.SerializeToString())

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None) -> VerifyResult:
        from studio.verify.single_node import read_model

        t0 = time.perf_counter()
        res = VerifyResult(verifier=self.name, target=self.target, tool=self.tool(), ran=True,
                           shapes=dict(shapes or {}))
        read = read_model(res, model)
        if read is None:
            return res
        proto, refs = read
        err = self._session(str(model))
        cpu = "cpu" if self.providers[0] == "CPUExecutionProvider" else ""
        if not whole_then_each(res, proto, refs, err, self.check_proto, placement=cpu,
                               failed_note=N_("session failed; each node was then built alone in a one-node session")):
            note_model_level(res, N_("every node builds alone: the failure is the model's (see error), not a node's"))
        res.seconds = round(time.perf_counter() - t0, 4)
        return res


def verifier(providers: list[str] | None = None) -> OrtVerifier:
    return OrtVerifier(providers=list(providers or DEFAULT_PROVIDERS))

"""AgentRunner: a model an edge agent serves, behind the runner interface (``studio.core.runner``).

So a parity check runs against a board the way it runs against ONNX Runtime or a compiled module:

    with OnnxRuntimeRunner("model.onnx") as ref, AgentRunner("http://board:8000", "tiny", token) as board:
        rep = run_parity(ref, board, tolerance=TOLERANCES["fp32"])

Requests go through ``AgentClient`` (KServe v2 JSON: metadata, infer), so a refusal is the StudioError the rest
of the studio shows; the inputs a parity check makes come from the served model's own metadata.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from studio.core.errors import ModelError
from studio.core.runner import BaseRunner
from studio.package.client import AgentClient


class AgentRunner(BaseRunner):
    """Runs ``model`` on the agent at ``url`` (``token``: its inference token, where it asks for one)."""

    name = "agent"

    def __init__(self, url: str, model: str, token: str | None = None, *, verify: bool | str = True,
                 timeout: float = 30.0, outputs: list[str] | None = None) -> None:
        super().__init__()
        self.model, self.outputs = model, outputs
        self.client = AgentClient(url, token, verify=verify, timeout=timeout)
        self._meta: dict[str, Any] = {}

    def activate_impl(self) -> None:
        """The model's metadata, which also says it is served (a 404 names the model)."""
        self._meta = self.client.model_metadata(self.model)
        if not self._meta.get("inputs"):
            raise ModelError(f"agent {self.client.url} serves {self.model} without inputs in its metadata",
                             offending=self.model, hint="redeploy the bundle; check `studio agent status`")

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        names = {i["name"] for i in self._meta.get("inputs", [])}
        return self.client.infer(self.model, {k: v for k, v in feed.items() if k in names}, self.outputs)

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        return {i["name"]: (str(i.get("datatype", "")), [None if int(d) < 0 else int(d) for d in i.get("shape", [])])
                for i in self._meta.get("inputs", [])}

"""TritonRunner: the runner interface (activate / infer / deactivate) over a model on a Triton server."""

from __future__ import annotations

from typing import Any

import numpy as np

from studio.core.errors import ModelError
from studio.core.runner import BaseRunner
from studio.triton.client import TritonClient


class TritonRunner(BaseRunner):
    """Runs ``model`` on the server at ``url``; comparisons and benchmarks treat it like any local runner."""

    name = "triton"

    def __init__(self, url: str, model: str, *, version: str = "", protocol: str | None = None,
                 headers: dict[str, str] | None = None, ssl: bool | None = None, timeout: float = 10.0,
                 outputs: list[str] | None = None) -> None:
        super().__init__()
        self.url, self.model, self.version = url, model, version
        self.outputs = outputs
        self.client = TritonClient(url, protocol=protocol, headers=headers, ssl=ssl, timeout=timeout)
        self._config: dict[str, Any] = {}

    def activate_impl(self) -> None:
        self.client.ping()
        if not self.client.model_ready(self.model, self.version):
            raise ModelError(f"model {self.model} is not ready on {self.url}", offending=self.model,
                             hint="load it first (`studio triton load` or the Devices page)")
        self._config = self.client.model_config(self.model, self.version)

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return self.client.infer(self.model, feed, outputs=self.outputs, version=self.version)

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        batched = int(self._config.get("max_batch_size", 0) or 0) > 0
        out = {}
        for i in self._config.get("input", []):
            dims: list[Any] = [None if int(d) < 0 else int(d) for d in i.get("dims", [])]
            out[i["name"]] = (str(i.get("data_type", "")), ([None] if batched else []) + dims)
        return out

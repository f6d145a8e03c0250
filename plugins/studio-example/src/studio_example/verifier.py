"""A real (if tiny) verifier: reads the ONNX graph with ``onnx`` and answers per node from its op table.

It stands where a vendor toolchain would: the studio compares its answers with the example-npu profile.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# What the example NPU's "compiler" lowers; Softmax runs on its CPU (a fallback the static profile calls unsupported).
NPU_OPS = frozenset({"Add", "Sub", "Mul", "Div", "MatMul", "Gemm", "Relu", "Sigmoid", "Tanh", "Identity",
                     "Reshape", "Transpose"})
CPU_OPS = frozenset({"Softmax"})
TOOL = "studio-example op table 0.1"


@dataclass
class ExampleVerifier:
    name: str = "example-npu"
    target: str = "example-npu"

    def available(self) -> tuple[bool, str]:
        if importlib.util.find_spec("onnx") is None:
            return False, "needs onnx: python3 -m pip install onnx"
        return True, TOOL

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None) -> Any:
        import onnx

        from studio.inspect.model import iter_graphs
        from studio.verify.api import NodeCheck, VerifyResult

        t0 = time.monotonic()
        try:
            proto = onnx.load(str(model), load_external_data=False)
        except Exception as exc:  # the tool could not read the model: say so in its words
            return VerifyResult(self.name, self.target, TOOL, ran=False, error=f"{type(exc).__name__}: {exc}")
        nodes: list[NodeCheck] = []
        for sub_path, graph, _owner in iter_graphs(proto.graph):
            for i, node in enumerate(graph.node):
                name = node.name or f"{node.op_type}_{i}"
                key = f"{sub_path}/{name}" if sub_path else name
                if node.domain not in ("", "ai.onnx"):
                    check = ("unsupported", "failed", f"custom domain {node.domain} has no lowering")
                elif node.op_type in NPU_OPS:
                    check = ("supported", "accelerator", "lowered to the NPU")
                elif node.op_type in CPU_OPS:
                    check = ("risky", "cpu", "no NPU lowering; runs on the CPU")
                else:
                    check = ("unsupported", "failed", f"no lowering for {node.op_type}")
                nodes.append(NodeCheck(node=key, op_type=node.op_type, verdict=check[0], placement=check[1],
                                       message=check[2], domain=node.domain))
        return VerifyResult(self.name, self.target, TOOL, ran=True, nodes=nodes,
                            seconds=round(time.monotonic() - t0, 4), shapes=dict(shapes or {}))

"""Reduced precision with a block list, and the per-layer error that grows it.

- ``to_int8_static``: QDQ INT8 (uint8 activations, per-channel int8 weights) of MatMul / Gemm / Conv with ranges
  from calibration feeds (ONNX Runtime's quantizer); ``exclude`` names nodes kept in float.
- ``layer_errors``: ONNX Runtime runs the reference and a candidate with every shared float tensor as an output
  and says, per node, how far its output is from the reference's (1 - cosine) and how much of that the node
  itself added (its error minus the worst of its inputs'). The search keeps the worst nodes in float.
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INT8_OPS = ("MatMul", "Gemm", "Conv")


def to_int8_static(model: Any, feeds: list[dict[str, Any]], exclude: list[str] | tuple[str, ...] = ()) -> Any:
    """Static QDQ INT8 of ``model`` calibrated on ``feeds``; nodes named in ``exclude`` stay float."""
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.items = iter(feeds)

        def get_next(self) -> dict[str, Any] | None:
            return next(self.items, None)

    with tempfile.TemporaryDirectory(prefix="studio-int8s-") as d:
        src, dst = Path(d) / "in.onnx", Path(d) / "out.onnx"
        onnx.save(model, str(src))
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # the quantizer logs pre-processing advice on the root logger
        try:
            quantize_static(str(src), str(dst), Reader(), quant_format=QuantFormat.QDQ,
                            op_types_to_quantize=list(INT8_OPS), activation_type=QuantType.QUInt8,
                            weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=list(exclude),
                            calibration_providers=["CPUExecutionProvider"])
        finally:
            root.setLevel(level)
        return onnx.load(str(dst))


@dataclass
class LayerError:
    """One node of the reference: its output's error in the candidate and the part it added itself."""

    node: str
    op_type: str
    error: float  # 1 - cosine of its output against the reference's, worst over the feeds
    added: float  # error - the worst error among its inputs (what this node contributed)


def _with_outputs(model: Any, names: list[str], types: dict[str, Any]) -> bytes:
    import onnx

    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(types[n])
    return m.SerializeToString()


def _float_tensors(model: Any) -> dict[str, Any]:
    """name -> ValueInfo of every float / float16 tensor a node makes (shapes inferred)."""
    from studio.core.big_proto import infer_shapes

    inferred = infer_shapes(model, strict_mode=False)
    made = {o for n in inferred.graph.node for o in n.output if o}
    return {v.name: v for v in [*inferred.graph.value_info, *inferred.graph.output]
            if v.name in made and v.type.tensor_type.elem_type in (1, 10)}


def layer_errors(reference: Any, candidate: Any, feeds: list[dict[str, Any]], max_feeds: int = 4) -> list[LayerError]:
    """Per-node error of ``candidate`` against ``reference`` (ModelProtos) on ``feeds``, worst added first."""
    import numpy as np

    from studio.core.parity import cosine
    from studio.core.runner import ort_session, session_options

    ref_t, cand_t = _float_tensors(reference), _float_tensors(candidate)
    shared = [n for n in ref_t if n in cand_t]
    so = session_options(optimization="disable")  # keep every named tensor
    ref_s = ort_session(_with_outputs(reference, shared, ref_t), so, what="the reference")
    cand_s = ort_session(_with_outputs(candidate, shared, cand_t), so, what="the candidate")
    worst: dict[str, float] = {}
    for feed in feeds[:max_feeds]:
        a = dict(zip([o.name for o in ref_s.get_outputs()], ref_s.run(None, feed), strict=True))
        cf = {i.name: feed[i.name] for i in cand_s.get_inputs() if i.name in feed}
        b = dict(zip([o.name for o in cand_s.get_outputs()], cand_s.run(None, cf), strict=True))
        for name in shared:
            x = np.asarray(a[name], dtype=np.float64).ravel()
            y = np.asarray(b[name], dtype=np.float64).ravel()
            if x.shape != y.shape or not x.size:
                continue
            cos = cosine(x, y)  # fp16's saturated -10000s can overflow the norms: an inf error, said as 1
            err = 1.0 - cos if np.isfinite(cos) else 1.0
            worst[name] = max(worst.get(name, 0.0), err)
    out: list[LayerError] = []
    for n in reference.graph.node:
        errs = [worst[o] for o in n.output if o in worst]
        if not errs:
            continue
        before = max((worst.get(i, 0.0) for i in n.input if i), default=0.0)
        out.append(LayerError(n.name or n.output[0], n.op_type, max(errs), max(errs) - before))
    out.sort(key=lambda e: -e.added)
    return out

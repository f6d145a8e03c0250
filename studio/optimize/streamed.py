"""FP16 of a model whose weights stay on disk: the fix converts the graph and streams the weights tensor by tensor.

Why: the in-memory fix holds the model, its deep copy, the converter's output and its serialization at once, 5.6x
the weights at its peak; the FP16 fix of Qwen2-VL-2B's 7.1 GB decoder could not run on a 24 GB machine (issue 29).
Here the graph is loaded without its weights (the external tensors keep their ``location`` / ``offset`` /
``length``), onnxconverter-common converts it as it does every model (a weight it types FLOAT16 has no bytes to
convert yet), and ``studio.core.external_data.write_layout`` then writes the new data file, passing each weight the
converter retyped through the converter's own ``convert_np_to_float16`` (same clipping), 64 MB at a time. Peak:
the graph plus one chunk. Parity then runs the original and the result one after the other (``check_parity``'s
``one_at_a_time``), so the two ONNX Runtime sessions are never held together.

Only steps that do not read weight values take this path (static dims and the precision); simplification, the
graph rewrites, host splits and calibration load the whole model (``studio.optimize.api``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studio.core.external_data import is_external, iter_tensors, tensor_nbytes, write_layout

FLOAT, FLOAT16 = 1, 10  # TensorProto.DataType


def streamable(steps: Any, source: Path) -> bool:
    """FP16 with only weight-blind steps, of a model whose weights are in data files: the streamed path."""
    from studio.core.external_data import read_graph, uses_external_data

    blind = not (steps.simplify or steps.unfuse or steps.drop_nan_guards or steps.host_split
                 or steps.calibration is not None)
    return steps.precision == "fp16" and blind and uses_external_data(read_graph(source))


def _key(t: Any) -> tuple[str, str]:
    e = {kv.key: kv.value for kv in t.external_data}
    return e.get("location", ""), e.get("offset", "0")


def load_graph(source: Path) -> tuple[Any, dict[tuple[str, str], int]]:
    """``source`` without its weights (its data files checked), each external tensor's ``length`` written out, and
    the source type of each by (location, offset): what ``write_weights`` converts against."""
    import onnx

    from studio.core.external_data import check_model_files

    check_model_files(source)  # a missing or truncated data file: ModelError naming it
    model = onnx.load(str(source), load_external_data=False)
    types: dict[tuple[str, str], int] = {}
    for t in iter_tensors(model):
        if is_external(t):
            if not any(kv.key == "length" for kv in t.external_data):
                kv = t.external_data.add()
                kv.key, kv.value = "length", str(tensor_nbytes(t))
            types[_key(t)] = t.data_type
    return model, types


def _to_fp16(chunk: bytes) -> bytes:
    import numpy as np
    from onnxconverter_common.float16 import convert_np_to_float16

    with warnings.catch_warnings():  # "will be truncated": per chunk, the in-memory path warns once per tensor
        warnings.simplefilter("ignore")
        return convert_np_to_float16(np.frombuffer(chunk, dtype=np.float32)).tobytes()  # the converter's defaults


def converter(types: dict[tuple[str, str], int]) -> Callable[[Any], Callable[[bytes], bytes] | None]:
    """Per external tensor of the converted graph: FP32 -> FP16 when the converter retyped it, else a plain copy."""

    def pick(t: Any) -> Callable[[bytes], bytes] | None:
        was = types.get(_key(t))
        if was is None or was == t.data_type:
            return None
        if was == FLOAT and t.data_type == FLOAT16:
            return _to_fp16
        raise ValueError(f"tensor {t.name!r}: type changed from {was} to {t.data_type}, which cannot be streamed")

    return pick


def write_weights(model: Any, source: Path, target: Path, types: dict[tuple[str, str], int], *,
                  fraction: Callable[[float], None] | None = None,
                  check_cancel: Callable[[], None] | None = None) -> None:
    """``model`` (converted, weights still in ``source``'s data files) as ``target`` + ``target.data``;
    ``fraction(0..1)`` hears the source bytes read so far, ``check_cancel`` may raise between tensors."""
    total = sum(int(kv.value) for t in iter_tensors(model) if is_external(t)
                for kv in t.external_data if kv.key == "length") or 1
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if fraction is not None:
            fraction(done[0] / total)

    write_layout(source, target, model=model, convert=converter(types), progress=step, check_cancel=check_cancel)

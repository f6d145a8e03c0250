"""Read an ONNX model's real inputs and outputs (names, element types, dims) without loading weights."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from studio.core.errors import ModelError


@dataclass
class TensorSig:
    """One graph input or output; ``dims`` hold ints for fixed dims and strings (or None) for dynamic ones."""

    name: str
    elem_type: int
    dims: list[int | str | None] = field(default_factory=list)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def is_dynamic(self, i: int) -> bool:
        d = self.dims[i]
        return not isinstance(d, int) or d <= 0


@dataclass
class OnnxSignature:
    path: str
    inputs: list[TensorSig]
    outputs: list[TensorSig]
    opset: int = 0

    def input(self, name: str) -> TensorSig | None:
        return next((t for t in self.inputs if t.name == name), None)

    def output(self, name: str) -> TensorSig | None:
        return next((t for t in self.outputs if t.name == name), None)


def _sig(vi) -> TensorSig:  # type: ignore[no-untyped-def]
    tt = vi.type.tensor_type
    dims: list[int | str | None] = []
    for d in tt.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return TensorSig(vi.name, int(tt.elem_type), dims)


def read_signature(path: Path | str) -> OnnxSignature:
    """Inputs that are initializers (constant defaults) are not model inputs and are skipped."""
    import onnx

    path = Path(path)
    if not path.is_file():
        raise ModelError(f"ONNX model {path} does not exist", offending=str(path),
                         hint="export the model first (`studio export`) or check the path")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # onnx raises DecodeError and friends
        raise ModelError(f"{path} is not a readable ONNX model: {exc}", offending=str(path),
                         hint="re-export the model; the file may be truncated") from exc
    from studio.core.external_data import check_data_files

    check_data_files(model, path)  # a missing or truncated data file: Triton could not load the version either
    inits = {i.name for i in model.graph.initializer}
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    return OnnxSignature(str(path), [_sig(v) for v in model.graph.input if v.name not in inits],
                         [_sig(v) for v in model.graph.output], opset)

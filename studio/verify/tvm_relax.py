"""The TVM Relax verifier: a real ``tvm.relax.frontend.onnx.from_onnx`` import of the model.

The import succeeds: every node converted. It fails: TVM names the first op it could not convert (its
exception, plus the "Error converting operator X" line it prints); every node is then imported alone as a
one-node model, so each gets TVM's own verdict and words. TVM is imported only inside ``verify``.
"""

from __future__ import annotations

import contextlib
import io
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.verify.api import VerifyResult
from studio.verify.attribution import note_model_level, short, whole_then_each

INSTALL_HINT = "install apache-tvm: python3 -m pip install 'deployment-studio[compile]'"
_PRINTED_OP = re.compile(r"Error converting operator (\w+)")
# Ops whose converters take a Relax shape value (the output of Shape) as it is; any other consumer of a Shape
# output fails the import with "cannot handle ShapeExpr inputs" (tvm/relax/frontend/onnx, apache-tvm 0.27).
SHAPE_COMPATIBLE = {"Reshape", "Resize", "ConstantOfShape", "Gather", "Slice", "Shape", "Expand", "Concat", "Equal",
                    "Where", "Cast", "CastLike", "Squeeze"}


def shape_expr_culprits(refs: list[Any]) -> list[Any]:
    """Main-graph nodes that read a Shape output directly but cannot take a shape value."""
    shapes = {o for r in refs if not r.graph and r.op_type == "Shape" for o in r.node.output}
    return [r for r in refs if not r.graph and r.op_type not in SHAPE_COMPATIBLE
            and any(i in shapes for i in r.node.input)]


@dataclass
class TvmRelaxVerifier:
    """Imports with parameters folded as constants (the importer's default), at ``shapes`` when given."""

    name: str = "tvm-relax"
    target: str = "tvm-relax"

    def available(self) -> tuple[bool, str]:
        import importlib.metadata as md
        import importlib.util

        try:
            found = importlib.util.find_spec("tvm") is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return False, f"apache-tvm is not installed; {INSTALL_HINT}"
        try:
            return True, f"apache-tvm {md.version('apache-tvm')}"
        except md.PackageNotFoundError:
            return True, "tvm (version unknown)"

    def tool(self) -> str:
        return self.available()[1]

    def import_error(self, proto: Any, shapes: dict[str, list[int]] | None = None) -> str:
        """"" when ``from_onnx`` converts the model, else TVM's message (with the op it printed)."""
        from tvm.relax.frontend.onnx import from_onnx

        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from_onnx(proto, shape_dict=shapes or None, keep_params_in_input=False)
        except Exception as exc:  # TVM raises anything: TVMError, ValueError, KeyError, AssertionError...
            m = _PRINTED_OP.search(buf.getvalue())
            where = f"Error converting operator {m.group(1)}: " if m else ""
            return f"{where}{type(exc).__name__}: {exc}"
        return ""

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None) -> VerifyResult:
        import onnx

        from studio.verify.single_node import node_refs

        t0 = time.perf_counter()
        res = VerifyResult(verifier=self.name, target=self.target, tool=self.tool(), ran=True,
                           shapes=dict(shapes or {}))
        ok, why = self.available()
        if not ok:
            res.ran, res.error = False, why
            return res
        try:
            proto = onnx.load(str(model))
        except Exception as exc:
            res.ran, res.error = False, f"cannot read the model: {exc}"
            return res
        refs = node_refs(proto)
        err = self.import_error(proto, shapes)
        if whole_then_each(res, proto, refs, err, self.import_error,
                           failed_note="import failed; each node was then imported alone as a one-node model"):
            res.seconds = round(time.perf_counter() - t0, 4)
            return res
        if "cannot handle ShapeExpr inputs" in err:
            by_key = res.by_node()
            res.notes.append("the import failed on a Shape output read by an op that takes tensors only; one-node "
                             "checks turn that input into a plain tensor, so those nodes are named from the graph")
            for r in shape_expr_culprits(refs):
                by_key[r.key].verdict = "unsupported"
                by_key[r.key].message = short(f"{err} (this node reads a Shape output; its converter takes "
                                              "tensors only)")
        note_model_level(res, "every node imports alone: the failure is the model's (see error), not a node's")
        res.seconds = round(time.perf_counter() - t0, 4)
        return res


def verifier() -> TvmRelaxVerifier:
    return TvmRelaxVerifier()

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

from studio.core.catalogue import N_
from studio.verify.api import VerifyResult, importable
from studio.verify.attribution import note_model_level, short, whole_then_each

INSTALL_HINT = "install apache-tvm: python3 -m pip install 'deployment-studio[compile]'"
_PRINTED_OP = re.compile(r"Error converting operator (\w+)")
SHAPE_ERRORS = ("cannot handle ShapeExpr inputs", "requires the input new shape to be Shape")


def shape_value_culprits(model: Path) -> dict[str, Any]:
    """Node key -> ShapeFinding of the tvm-relax profile's shape-value rule (studio/inspect/shape_values.py,
    one list of the ops TVM lets take a shape value: the profile's ``shape_values.accepts``)."""
    from studio.inspect.api import load_structure
    from studio.inspect.profiles import builtin_dir, load_profile_file
    from studio.inspect.shape_values import shape_value_findings

    rule = load_profile_file(builtin_dir() / "tvm-relax.yaml").shape_values
    if rule is None:
        return {}
    return shape_value_findings(load_structure(model), set(rule.accepts))[0]


@dataclass
class TvmRelaxVerifier:
    """Imports with parameters folded as constants (the importer's default), at ``shapes`` when given."""

    name: str = "tvm-relax"
    target: str = "tvm-relax"

    def available(self) -> tuple[bool, str]:
        import importlib.metadata as md

        if not importable("tvm"):
            return False, N_(f"apache-tvm is not installed; {INSTALL_HINT}")
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
        from studio.verify.single_node import read_model

        t0 = time.perf_counter()
        res = VerifyResult(verifier=self.name, target=self.target, tool=self.tool(), ran=True,
                           shapes=dict(shapes or {}))
        ok, why = self.available()
        if not ok:
            res.ran, res.error = False, why
            return res
        read = read_model(res, model, external_data=True)
        if read is None:
            return res
        proto, refs = read
        err = self.import_error(proto, shapes)
        if whole_then_each(res, proto, refs, err, self.import_error,
                           failed_note=N_("import failed; each node was then imported alone as a one-node model")):
            res.seconds = round(time.perf_counter() - t0, 4)
            return res
        if any(e in err for e in SHAPE_ERRORS) or any(e in n.message for n in res.nodes for e in SHAPE_ERRORS):
            self._name_shape_culprits(res, Path(model), err)
        note_model_level(res, N_("every node imports alone: the failure is the model's (see error), not a node's"))
        res.seconds = round(time.perf_counter() - t0, 4)
        return res


    @staticmethod
    def _name_shape_culprits(res: VerifyResult, model: Path, err: str) -> None:
        """A shape-value failure (of the whole import, or of one-node checks): a one-node model feeds a Shape
        output or a new shape as a plain tensor, so it misses the culprit and blames every Reshape; the
        dataflow rule, which follows where each input comes from, names them instead."""
        by_key = res.by_node()
        culprits = shape_value_culprits(model)
        res.notes.append(N_("shape values (a Shape output read by an op that takes tensors only, or a Reshape whose "
                         "new shape is a runtime tensor): one-node checks cannot see where an input comes from, so "
                         "those nodes are judged by the tvm-relax profile's shape-value rule"))
        for key, n in by_key.items():
            f = culprits.get(key)
            if f is not None:
                n.verdict, n.message = "unsupported", short(f.reason)
            elif n.verdict != "supported" and any(e in n.message for e in SHAPE_ERRORS):
                n.verdict, n.message = "supported", ("fails alone only because the one-node model feeds its shape "
                                                      "input as a plain tensor; in the model it is a shape value")


def verifier() -> TvmRelaxVerifier:
    return TvmRelaxVerifier()

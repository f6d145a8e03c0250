"""Everything that touches apache-tvm: import, lower, build, export. TVM is imported inside functions only.

Parameters are kept out of the compiled code (``keep_params_in_input=True`` + ``detach_params``) so they
are saved beside the library as ``params.bin``, the layout MLC uses: weights can be swapped or quantised
without a rebuild, and the library stays small.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from studio.core.catalogue import N_
from studio.core.errors import DependencyMissing, TargetError

INSTALL_HINT = ("install apache-tvm with: python3 -m pip install 'deployment-studio[compile]' "
                "(or python3 -m pip install apache-tvm)")


def tvm_status() -> tuple[bool, str]:
    """(available, version or reason) without importing TVM when it is absent."""
    try:
        if importlib.util.find_spec("tvm") is None:
            return False, "apache-tvm is not installed; " + INSTALL_HINT
    except (ImportError, ValueError) as exc:
        return False, f"apache-tvm cannot be imported ({exc}); " + INSTALL_HINT
    try:
        from importlib.metadata import version

        return True, version("apache-tvm")
    except Exception:
        return True, "unknown version"


def require_tvm() -> Any:
    """Import TVM or raise DependencyMissing with the install hint."""
    try:
        import tvm
    except ImportError as exc:
        err = DependencyMissing.for_module("tvm", "compile", "studio compile (TVM Relax)")
        err.hint = INSTALL_HINT
        raise err from exc
    return tvm


def short_error(exc: BaseException) -> str:
    """The line of a (often very long) TVM error that says what went wrong."""
    text = str(exc).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    skip = re.compile(r"^(File |at |#\d|Traceback|\^|\d+: |Stack trace|-{3,})")
    keep = [ln for ln in lines if not skip.match(ln)]
    msg = (keep or lines or [type(exc).__name__])[-1]
    for ln in keep:  # TVM's check failures are the most telling line
        if "Check failed" in ln:
            msg = ln
            break
    msg = re.sub(r"^(tvm\.error\.)?\w+Error: ", "", msg)
    return msg[:500]


@dataclass
class StageFailure:
    """Why one TVM stage failed: used by the pipeline and by every bisection trial."""

    stage: str  # "import" | "lower" | "build"
    error_type: str
    message: str  # short_error()
    converting_op: str | None = None  # what TVM's ONNX importer printed it was converting
    raw: str = ""

    def same_as(self, other: StageFailure) -> bool:
        return self.stage == other.stage and self.error_type == other.error_type and \
            _norm(self.message) == _norm(other.message)


def _norm(msg: str) -> str:
    return re.sub(r"\d+", "N", msg)[:160]


class TVMStageError(Exception):
    def __init__(self, failure: StageFailure) -> None:
        super().__init__(failure.message)
        self.failure = failure


def import_onnx(model: onnx.ModelProto, shapes: dict[str, list[int]],
                dtypes: dict[str, str]) -> tuple[Any, list[str], list[np.ndarray]]:
    """ONNX -> Relax IRModule with parameters detached: (mod, param_names, param_values)."""
    require_tvm()
    from tvm.relax.frontend import detach_params
    from tvm.relax.frontend.onnx import from_onnx

    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            mod = from_onnx(model, shape_dict=shapes, dtype_dict=dtypes, keep_params_in_input=True)
    except Exception as exc:
        printed = buf.getvalue()
        m = re.search(r"Error converting operator (\w+)", printed)
        raise TVMStageError(StageFailure("import", type(exc).__name__, short_error(exc),
                                         m.group(1) if m else None, (printed + "\n" + str(exc))[-4000:])) from exc
    func = mod["main"]
    num_input = int(func.attrs["num_input"]) if func.attrs and "num_input" in func.attrs else len(shapes)
    names = [str(getattr(p, "name", None) or getattr(p, "name_hint", "")) for p in func.params[num_input:]]
    mod, params = detach_params(mod)
    values = [p.numpy() for p in params.get("main", [])]
    return mod, names, values


def lower(mod: Any) -> Any:
    """Decompose inference-only ops (batch norm, layer norm) and legalize Relax ops to TIR."""
    from tvm import relax

    try:
        mod = relax.transform.DecomposeOpsForInference()(mod)
        return relax.transform.LegalizeOps()(mod)
    except Exception as exc:
        raise TVMStageError(StageFailure("lower", type(exc).__name__, short_error(exc), raw=str(exc)[-4000:])) from exc


def make_target(tvm_json: dict[str, Any]) -> Any:
    tvm = require_tvm()
    try:
        return tvm.target.Target(tvm_json)
    except Exception as exc:
        raise TargetError(f"TVM rejects the target {tvm_json}: {short_error(exc)}", offending=str(tvm_json),
                          hint="check the board profile's tvm_target (kind, mtriple, mcpu, mattr)") from exc


def check_codegen(kind: str) -> None:
    """Fail early, with a reason, when this TVM build has no code generator for ``kind``."""
    tvm = require_tvm()
    if kind == "llvm":
        ok = tvm.support.libinfo().get("USE_LLVM", "OFF") not in ("OFF", "", None)
    else:
        ok = tvm.get_global_func(f"target.build.{kind}", allow_missing=True) is not None
    if not ok:
        raise TargetError(f"this apache-tvm build has no '{kind}' code generator", offending=kind,
                          hint=f"build TVM from source with USE_{kind.upper()}=ON (or use MLC's TVM wheels), "
                               "or choose --target opencl / aarch64-neon")


def build(mod: Any, tvm_json: dict[str, Any]) -> Any:
    """tvm.compile with the default Relax pipeline (it schedules GPU kernels itself)."""
    tvm = require_tvm()
    target = make_target(tvm_json)
    try:
        return tvm.compile(mod, target=target)
    except Exception as exc:
        raise TVMStageError(StageFailure("build", type(exc).__name__, short_error(exc), raw=str(exc)[-4000:])) from exc


def trial(model: onnx.ModelProto, shapes: dict[str, list[int]], dtypes: dict[str, str],
          upto: str = "import", tvm_json: dict[str, Any] | None = None) -> StageFailure | None:
    """Run the stages up to ``upto`` on ``model``; the failure, or None when they all pass."""
    import warnings

    try:
        with warnings.catch_warnings():  # sub-graph outputs without value_info make the importer warn
            warnings.simplefilter("ignore")
            mod, _, _ = import_onnx(model, shapes, dtypes)
            if upto in ("lower", "build"):
                mod = lower(mod)
            if upto == "build":
                build(mod, tvm_json or {"kind": "llvm"})
    except TVMStageError as exc:
        return exc.failure
    except Exception as exc:  # any other crash in TVM's Python code is a failure of this graph too
        return StageFailure(upto, type(exc).__name__, short_error(exc), raw=str(exc)[-4000:])
    return None


def save_params(path: Path, names: list[str], values: list[np.ndarray]) -> None:
    """TVM's own param-dict format, loadable on the board with tvm.runtime.load_param_dict."""
    tvm = require_tvm()
    data = tvm.runtime.save_param_dict({n: tvm.runtime.tensor(v) for n, v in zip(names, values, strict=True)})
    path.write_bytes(bytes(data))


def load_params(path: Path, names: list[str]) -> list[Any]:
    tvm = require_tvm()
    d = tvm.runtime.load_param_dict(bytearray(path.read_bytes()))
    return [d[n] for n in names]


def export_library(ex: Any, out_dir: Path, *, host: bool, cross_cc: str | None) -> tuple[list[str], list[str]]:
    """Write the library: ``model.so`` on the host; ``model.tar`` of objects (+ ``model.so`` linked with the
    cross compiler when it is installed) for a board. Returns (file names, warnings)."""
    files, warnings = [], []
    if host:
        ex.export_library(str(out_dir / "model.so"))
        return ["model.so"], warnings
    ex.export_library(str(out_dir / "model.tar"))
    files.append("model.tar")
    if cross_cc:
        try:
            ex.export_library(str(out_dir / "model.so"), cc=cross_cc)
            files.append("model.so")
        except Exception as exc:
            (out_dir / "model.so").unlink(missing_ok=True)
            warnings.append(N_(f"linking model.so with {cross_cc} failed ({short_error(exc)}); "
                            "model.tar holds the objects to link on the board"))
    else:
        warnings.append(N_("no aarch64 cross compiler here, so only model.tar (objects) was written; link it on the "
                        "board, or install Debian's gcc-aarch64-linux-gnu (`make cross-toolchain`) for a model.so"))
    return files, warnings

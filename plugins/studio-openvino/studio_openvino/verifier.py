"""The ``openvino-cpu`` verifier: OpenVINO's own conversion, CPU query and CPU compile, per ONNX node.

``read_model`` raises OpConversionFailure naming the ops with no conversion rule (and, per failed op, the
node's outputs in its message); ``convert_partially`` keeps going with framework-node placeholders, and
``query_model(model, "CPU")`` lists the friendly names the CPU plugin runs. OpenVINO names an operation after
the ONNX node (its name, else its output); operations a node is decomposed into are walked forward to the
operation that carries the node's name, so each ONNX node collects every operation it became. When the query
takes every operation, ``compile_model(model, "CPU")`` builds it as a deployment would: its refusal is the
model's error.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.catalogue import N_
from studio.verify.api import NodeCheck, VerifyResult, importable

SKIP_TYPES = {"Parameter", "Result", "Constant"}
FRAMEWORK_TYPES = {"ONNXFrameworkNode", "NotSupportedONNXNode", "FrameworkNode"}
NPU_NOTE = N_("NPU: not queried (query_model(..., 'NPU') needs Intel's NPU compiler library, not shipped on PyPI); "
            "NPU rows stay from the published list in the openvino target profile")
_NO_RULE = re.compile(r"No conversion rule found for operations:\s*([^\n]+)")
_FAILED = re.compile(r"^-- ([\w.:]+?)(?:-(\d+))? with a message:\s*\n(.*?)(?=^-- |^Summary:|\Z)", re.S | re.M)
_NODE_OUTS = re.compile(r"ONNX node '<Node\((\w+)\): ([^>]*)>'")
_BAD_DTYPE = re.compile(r"Unsupported data type (\w+)")


def _op_of(item: str) -> str:
    """``ai.onnx.preview.training.Adam`` / ``BitCast-26`` / ``util::SequenceConstruct`` -> the op type."""
    item = re.sub(r"-\d+$", "", item.strip())
    return re.split(r"[.:]+", item)[-1]


@dataclass
class ConversionFailure:
    """What read_model's OpConversionFailure says: ops without a rule, and per failed node its message."""

    no_rule: list[str]
    failed: list[tuple[str, list[str], str]]  # (op type, node outputs, message)


def parse_conversion_failure(message: str) -> ConversionFailure:
    no_rule: list[str] = []
    for m in _NO_RULE.finditer(message):
        no_rule += [_op_of(x) for x in m.group(1).split(",") if x.strip()]
    failed = []
    for m in _FAILED.finditer(message):
        body = " ".join(m.group(3).split())
        outs = _NODE_OUTS.search(m.group(3))
        names = [o.strip() for o in outs.group(2).split(",")] if outs else []
        failed.append((_op_of(m.group(1)), names, body[:600]))
    return ConversionFailure(no_rule=no_rule, failed=failed)


def _version() -> str:
    import importlib.metadata as md

    try:
        return md.version("openvino")
    except md.PackageNotFoundError:
        return "unknown"


@dataclass
class OpenVinoCpuVerifier:
    name: str = "openvino-cpu"
    target: str = "openvino"
    device: str = "CPU"
    _keep: Any = None

    def available(self) -> tuple[bool, str]:
        if not importable("openvino"):
            return False, N_("openvino is not installed; python3 -m pip install openvino==2026.4.1")
        return True, f"openvino {_version()}"

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None) -> VerifyResult:
        from studio.verify.single_node import read_model

        t0 = time.perf_counter()
        res = VerifyResult(verifier=self.name, target=self.target, tool=f"openvino {_version()} ({self.device})",
                           ran=True, shapes=dict(shapes or {}), notes=[NPU_NOTE])
        ok, why = self.available()
        if not ok:
            res.ran, res.error = False, why
            return res
        read = read_model(res, model)
        if read is None:
            return res
        proto, refs = read
        ov_model, failure, load_error = self._convert(model, shapes)
        if ov_model is None:
            res.error = load_error
            res.nodes = self._dtype_blame(proto, refs, load_error)
            res.seconds = round(time.perf_counter() - t0, 4)
            return res
        if failure is not None:
            res.error = load_error
            res.notes.append(N_("read_model failed (OpConversionFailure); convert_partially converted the rest"))
        try:
            import openvino as ov

            supported = set(ov.Core().query_model(ov_model, self.device))
        except Exception as exc:
            res.error = (res.error + "\n" if res.error else "") + f"query_model({self.device}): {exc}"
            supported = set()
        res.nodes = map_nodes(proto, refs, ov_model, supported, failure, self.device)
        if failure is None and not res.error and all(n.verdict != "unsupported" for n in res.nodes):
            self._compile(res, ov_model)
        del ov_model
        self._keep = None
        res.seconds = round(time.perf_counter() - t0, 4)
        return res

    def _compile(self, res: VerifyResult, ov_model: Any) -> None:
        """Every node is taken by the query: the model must also compile for the device (a query answers per
        operation; compile_model is what a deployment runs, and can still refuse the graph)."""
        import openvino as ov

        try:
            ov.Core().compile_model(ov_model, self.device)
        except Exception as exc:
            res.error = f"compile_model({self.device}): " + " ".join(str(exc).split())[:1500]
            return
        res.notes.append(N_(f"compile_model({self.device}) built the model"))

    def _convert(self, model: Path, shapes: dict[str, list[int]] | None) -> tuple[Any, ConversionFailure | None, str]:
        """(ov model or None, the conversion failure if read_model refused, the error text)."""
        import openvino as ov

        core = ov.Core()
        try:
            m = core.read_model(str(model))
            self._reshape(m, shapes)
            return m, None, ""
        except Exception as exc:
            text = str(exc)
        if "OpConversionFailure" not in text and "conversion rule" not in text:
            return None, None, " ".join(text.split())[:1500]
        failure = parse_conversion_failure(text)
        try:
            fe = ov.frontend.FrontEndManager().load_by_framework("onnx")
            im = fe.load(str(model))
            m = fe.convert_partially(im)
            self._keep = (fe, im, m)  # framework nodes point into the frontend: it must outlive the model
            cut_framework_nodes(m, _onnx_types(model))
            self._reshape(m, shapes)
        except Exception as exc:
            return None, failure, " ".join(f"{text}\nconvert_partially: {exc}".split())[:1500]
        return m, failure, " ".join(text.split())[:1500]

    @staticmethod
    def _reshape(m: Any, shapes: dict[str, list[int]] | None) -> None:
        if shapes:
            m.reshape({k: list(v) for k, v in shapes.items()})

    @staticmethod
    def _dtype_blame(proto: Any, refs: list[Any], error: str) -> list[NodeCheck]:
        """The frontend refused the whole model: a data type it lacks blames the nodes touching it."""
        import onnx

        from studio.verify.single_node import inferred

        m = _BAD_DTYPE.search(error)
        bad = getattr(onnx.TensorProto, m.group(1), None) if m else None
        typed: dict[str, int] = {}
        if bad is not None:
            g = inferred(proto).graph
            for vi in list(g.input) + list(g.output) + list(g.value_info):
                typed[vi.name] = vi.type.tensor_type.elem_type
            for t in g.initializer:
                typed[t.name] = t.data_type
        out = []
        for r in refs:
            names = [n for n in list(r.node.input) + list(r.node.output) if n]
            hit = bad is not None and (any(typed.get(n) == bad for n in names) or any(
                a.name in ("to", "output_dtype") and a.i == bad for a in r.node.attribute))
            out.append(NodeCheck(node=r.key, op_type=r.op_type, domain=r.domain,
                                 verdict="unsupported" if hit else "unknown",
                                 message=error[:600] if hit else "not reached: the frontend refused the model"))
        return out


def _onnx_types(model: Path) -> dict[str, tuple[int, list[int] | None]]:
    """ONNX tensor name -> (elem type, dims with -1 for unknown / None for unknown rank), from inference."""
    import onnx

    from studio.verify.single_node import inferred

    g = inferred(onnx.load(str(model), load_external_data=False)).graph
    out: dict[str, tuple[int, list[int] | None]] = {}
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tt.shape.dim] if tt.HasField("shape") else None
        out[vi.name] = (tt.elem_type, dims)
    return out


def _ov_type(elem: int) -> Any:
    import onnx.helper
    import openvino as ov

    try:
        return ov.Type(onnx.helper.tensor_dtype_to_np_dtype(elem))
    except Exception:
        return ov.Type.f32


def cut_framework_nodes(m: Any, types: dict[str, tuple[int, list[int] | None]]) -> None:
    """Cut the placeholders of unconverted ops out, so query_model can compile the rest: their outputs become
    Parameters typed from ONNX inference, their inputs' producers get a Result each (nothing upstream drops)."""
    import openvino as ov
    import openvino.opset13 as ops

    params, results = [], []
    for op in list(m.get_ordered_ops()):
        if op.get_type_name() not in FRAMEWORK_TYPES:
            continue
        for inp in op.inputs():
            results.append(ops.result(inp.get_source_output()))
        for o in op.outputs():
            name = next(iter(sorted(o.get_names())), f"{op.get_friendly_name()}:{o.get_index()}")
            elem, dims = types.get(name, (0, None))
            if elem and dims is not None:
                shape, et = ov.PartialShape(dims), _ov_type(elem)
            elif op.inputs():  # ONNX could not type it (a custom op): guess its first input's type and shape
                src = op.inputs()[0].get_source_output()
                shape, et = src.get_partial_shape(), src.get_element_type()
            else:
                shape, et = ov.PartialShape.dynamic(), _ov_type(elem or 1)
            p = ops.parameter(shape, et, name=f"cut/{name}")
            for ti in list(o.get_target_inputs()):
                ti.replace_source_output(p.output(0))
            params.append(p)
    if params or results:
        m.add_parameters(params)
        m.add_results(results)
        m.validate_nodes_and_infer_types()


def _op_owner(ov_model: Any, names: dict[str, str]) -> dict[str, str]:
    """OpenVINO friendly name -> ONNX node key: by name or output, else the first named op downstream."""
    owner: dict[str, str] = {}
    ops = list(ov_model.get_ordered_ops())
    for op in ops:
        fn = op.get_friendly_name()
        key = names.get(fn)
        if key is None:
            for o in op.outputs():
                key = next((names[n] for n in o.get_names() if n in names), None)
                if key:
                    break
        if key is not None:
            owner[fn] = key
    for op in reversed(ops):  # decomposed pieces take the node of their first named consumer
        fn = op.get_friendly_name()
        if fn in owner or op.get_type_name() in SKIP_TYPES:
            continue
        for o in op.outputs():
            for t in o.get_target_inputs():
                k = owner.get(t.get_node().get_friendly_name())
                if k is not None:
                    owner[fn] = k
                    break
            if fn in owner:
                break
    return owner


def map_nodes(proto: Any, refs: list[Any], ov_model: Any, supported: set[str],
              failure: ConversionFailure | None, device: str) -> list[NodeCheck]:
    """Per ONNX node: unsupported if it failed conversion or any operation it became is off ``device``."""
    main = [r for r in refs if not r.graph]
    names: dict[str, str] = {}
    for r in main:
        for o in r.node.output:
            if o:
                names.setdefault(o, r.key)
        if r.node.name:
            names[r.node.name] = r.key
    owner = _op_owner(ov_model, names)
    missing: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    for op in ov_model.get_ordered_ops():
        fn, tn = op.get_friendly_name(), op.get_type_name()
        types[fn] = tn
        if tn in SKIP_TYPES or fn in supported:
            continue
        k = owner.get(fn)
        if k is not None:
            missing.setdefault(k, []).append(f"{tn} '{fn}'")
    conv: dict[str, str] = {}
    if failure is not None:
        for op_type, outs, msg in failure.failed:
            keys = [names[o] for o in outs if o in names] or [r.key for r in main if r.op_type == op_type]
            for k in keys:
                conv.setdefault(k, N_(f"conversion failed: {msg}"))
        for op_type in failure.no_rule:
            for r in main:
                if r.op_type == op_type:
                    conv.setdefault(r.key, N_(f"no conversion rule for {op_type} in OpenVINO's ONNX frontend"))
    out: list[NodeCheck] = []
    verdict_of: dict[str, NodeCheck] = {}
    for r in refs:
        if r.graph:  # inside an If/Loop/Scan body: OpenVINO converts and queries the body with its owner
            top = r.key.split("/", 1)[0]
            oc = verdict_of.get(top)
            v = "supported" if oc is not None and oc.verdict == "supported" else "unknown"
            out.append(NodeCheck(node=r.key, op_type=r.op_type, domain=r.domain, verdict=v,
                                 placement=oc.placement if oc else "",
                                 message=f"inside the body of '{top}': converted and queried with it"
                                 + ("" if v == "supported" else f" ('{top}' failed, its body was not checked)")))
            continue
        if r.key in conv:
            c = NodeCheck(r.key, r.op_type, "unsupported", "failed", conv[r.key], r.domain)
        elif r.key in missing:
            c = NodeCheck(r.key, r.op_type, "unsupported", "", f"query_model({device}) does not run "
                          + ", ".join(missing[r.key][:4]), r.domain)
        else:
            c = NodeCheck(r.key, r.op_type, "supported", device.lower() if device == "CPU" else "accelerator",
                          "" if any(v == r.key for v in owner.values()) else "folded or removed by the converter",
                          r.domain)
        verdict_of[r.key] = c
        out.append(c)
    return out


def verifier(name: str = "openvino-cpu") -> OpenVinoCpuVerifier:
    if name != "openvino-cpu":
        raise KeyError(f"studio-openvino provides 'openvino-cpu', not '{name}'")
    return OpenVinoCpuVerifier()

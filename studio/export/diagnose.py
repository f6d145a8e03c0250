"""Failure diagnosis: from an exception, a log or a parity table to stage, location, class and a fix.

Locations come from what the failure itself carries: the TorchScript IR scope of the failing aten node
(-> module path), the user frames of a torch.export error (file:line -> module), the node named in an
ONNX checker / ORT message, or the node producing a diverging output. A small graph snippet around the
node lets the GUI draw it. No torch import here: the pipeline passes the model in when it has one.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from studio.export.api import Diagnosis, ValidationCase

RAW_LOG_LIMIT = 20000

# -------------------------------------------------------------------------------- module locations


def module_at(model: Any, filename: str, lineno: int) -> str | None:
    """Torch module path whose ``forward`` source holds ``filename:lineno`` (first instance wins)."""
    if model is None:
        return None
    target = str(Path(filename).resolve())
    best: tuple[int, str] | None = None
    seen: dict[type, tuple[str, int, int] | None] = {}
    for name, mod in model.named_modules():
        cls = type(mod)
        if cls not in seen:
            try:
                fn = cls.forward
                src = str(Path(inspect.getsourcefile(fn) or "").resolve())
                lines, start = inspect.getsourcelines(fn)
                seen[cls] = (src, start, start + len(lines))
            except (TypeError, OSError):
                seen[cls] = None
        loc = seen[cls]
        if loc and loc[0] == target and loc[1] <= lineno < loc[2]:
            depth = name.count(".") + (1 if name else 0)
            if best is None or depth > best[0]:
                best = (depth, name)
    if best is None:
        return None
    name = best[1]
    return _strip_wrapper(name) or type(model.get_submodule(name)).__name__


def _strip_wrapper(path: str) -> str:
    """The exporter wraps the HF model as ``model``: report paths relative to the HF model."""
    return path[len("model."):] if path.startswith("model.") else ("" if path == "model" else path)


def user_frames(text: str) -> list[tuple[str, int]]:
    """``File "x.py", line N`` frames in a traceback-like text that are not inside torch itself."""
    frames = [(f, int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', text)]
    frames += [(f, int(n)) for f, n in re.findall(r"\s(/[^\s:]+\.py):(\d+)", text)]
    internal = ("/torch/", "/studio/export/exporters.py", "/studio/export/pipeline.py", "/studio/export/stages/",
                "<string>")
    return [(f, n) for f, n in frames if not any(x in f for x in internal)]


# -------------------------------------------------------------------------------- graph snippets


def onnx_snippet(model: Any, focus_node: str | None = None, focus_tensor: str | None = None,
                 radius: int = 2, limit: int = 15) -> dict[str, Any] | None:
    """Nodes within ``radius`` hops of the focus node (by name, or the producer of ``focus_tensor``)."""
    nodes = list(model.graph.node)
    if not nodes:
        return None
    names = [n.name or f"{n.op_type}_{i}" for i, n in enumerate(nodes)]
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}
    consumers: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        for t in n.input:
            consumers.setdefault(t, []).append(i)
    focus = None
    if focus_node and focus_node in names:
        focus = names.index(focus_node)
    elif focus_tensor and focus_tensor in producer:
        focus = producer[focus_tensor]
    if focus is None:
        return None
    keep = {focus}
    frontier = {focus}
    for _ in range(radius):
        nxt: set[int] = set()
        for i in frontier:
            nxt.update(producer[t] for t in nodes[i].input if t in producer)
            for t in nodes[i].output:
                nxt.update(consumers.get(t, []))
        nxt -= keep
        keep |= set(sorted(nxt, key=lambda j: abs(j - focus))[: max(0, limit - len(keep))])
        frontier = nxt
    graph_inputs = {i.name for i in model.graph.input}
    graph_outputs = {o.name for o in model.graph.output}
    out_nodes = [{"id": names[i], "op_type": nodes[i].op_type, "label": f"{nodes[i].op_type}\n{names[i]}",
                  "inputs": list(nodes[i].input), "outputs": list(nodes[i].output)} for i in sorted(keep)]
    edges = []
    for i in sorted(keep):
        for t in nodes[i].input:
            if t in producer and producer[t] in keep:
                edges.append({"from": names[producer[t]], "to": names[i], "tensor": t})
            elif t in graph_inputs:
                edges.append({"from": f"input:{t}", "to": names[i], "tensor": t})
                out_nodes.append({"id": f"input:{t}", "op_type": "Input", "label": t, "inputs": [], "outputs": [t]})
        for t in nodes[i].output:
            if t in graph_outputs:
                edges.append({"from": names[i], "to": f"output:{t}", "tensor": t})
                out_nodes.append({"id": f"output:{t}", "op_type": "Output", "label": t, "inputs": [t], "outputs": []})
    dedup = list({n["id"]: n for n in out_nodes}.values())
    return {"nodes": dedup, "edges": edges, "focus": names[focus], "kind": "onnx"}


_IR_LINE = re.compile(r"^\s*(%[\w.]+)\s*:\s*[^=]*=\s*([\w:]+)\(([^)]*)\)(.*)$")


def torchscript_ir_snippet(text: str, op: str, radius: int = 2) -> tuple[dict[str, Any] | None, str | None]:
    """Snippet of the TorchScript IR (printed in an unsupported-operator error) around the first ``op`` node.

    Returns the snippet and the module path from that node's ``scope:``.
    """
    parsed = []
    for line in text.splitlines():
        m = _IR_LINE.match(line)
        if m:
            out, kind, args, rest = m.groups()
            scope = re.search(r"scope:\s*(\S+)", rest)
            parsed.append({"out": out, "kind": kind, "ins": re.findall(r"%[\w.]+", args),
                           "scope": scope.group(1) if scope else ""})
    idx = next((i for i, p in enumerate(parsed) if p["kind"] == op), None)
    if idx is None:
        return None, None
    module = scope_to_module(parsed[idx]["scope"])
    by_out = {p["out"]: i for i, p in enumerate(parsed)}
    keep = {idx}
    frontier = {idx}
    for _ in range(radius):
        nxt: set[int] = set()
        for i in frontier:
            nxt.update(by_out[t] for t in parsed[i]["ins"] if t in by_out and parsed[by_out[t]]["kind"] != "prim::Constant")
            nxt.update(j for j, p in enumerate(parsed) if parsed[i]["out"] in p["ins"])
        nxt -= keep
        keep |= nxt
        frontier = nxt
    keep = set(sorted(keep, key=lambda j: abs(j - idx))[:12])

    def nid(i: int) -> str:
        return f"{parsed[i]['kind']} {parsed[i]['out']}"

    nodes = [{"id": nid(i), "op_type": parsed[i]["kind"], "label": f"{parsed[i]['kind']}\n{parsed[i]['out']}",
              "module": scope_to_module(parsed[i]["scope"])} for i in sorted(keep)]
    edges = [{"from": nid(by_out[t]), "to": nid(i), "tensor": t} for i in sorted(keep) for t in parsed[i]["ins"]
             if t in by_out and by_out[t] in keep]
    return {"nodes": nodes, "edges": edges, "focus": nid(idx), "kind": "torchscript"}, module


def scope_to_module(scope: str) -> str | None:
    """``pkg.W::/pkg.CLIPModel::model/pkg.CLIPTextModel::text_model/...`` -> ``text_model...``."""
    if not scope:
        return None
    attrs = [seg.split("::", 1)[1] for seg in scope.split("/") if "::" in seg and seg.split("::", 1)[1]]
    return _strip_wrapper(".".join(attrs)) or None


def locate_torch_op(wrapper: Any, args: tuple[Any, ...], op: str, window: int = 4) -> tuple[str | None, dict[str, Any] | None]:
    """Run ``wrapper`` once, recording torch calls with the module they run in; find the first ``op`` call.

    Returns the module path and a chain snippet of the calls around it (for ops known only by aten name).
    """
    import torch
    from torch.overrides import TorchFunctionMode

    short = op.split("::")[-1]
    stack: list[str] = []
    calls: list[tuple[str, str]] = []
    names = {m: n for n, m in wrapper.named_modules()}
    hooks = []

    def pre(mod: Any, _args: Any) -> None:
        stack.append(names.get(mod, ""))

    def post(mod: Any, _args: Any, _out: Any) -> None:
        if stack:
            stack.pop()

    for m in names:
        hooks.append(m.register_forward_pre_hook(pre))
        hooks.append(m.register_forward_hook(post))

    class Recorder(TorchFunctionMode):
        def __torch_function__(self, func, types, a=(), kw=None):  # type: ignore[no-untyped-def]
            fname = getattr(func, "__name__", str(func))
            if not fname.startswith("__") and len(calls) < 20000:
                calls.append((fname, stack[-1] if stack else ""))
            return func(*a, **(kw or {}))

    try:
        with torch.no_grad(), Recorder():
            wrapper(*args)
    except Exception:  # noqa: BLE001 - best effort: the location is a bonus
        pass
    finally:
        for h in hooks:
            h.remove()
    idx = next((i for i, (f, _m) in enumerate(calls) if f == short or f == f"{short}_"), None)
    if idx is None:
        return None, None
    module = _strip_wrapper(calls[idx][1])
    lo, hi = max(0, idx - window), min(len(calls), idx + window + 1)
    ids = [f"{i}:{calls[i][0]}" for i in range(lo, hi)]
    nodes = [{"id": ids[i - lo], "op_type": calls[i][0], "label": f"{calls[i][0]}\n{_strip_wrapper(calls[i][1])}",
              "module": _strip_wrapper(calls[i][1])} for i in range(lo, hi)]
    edges = [{"from": a, "to": b, "tensor": ""} for a, b in zip(ids, ids[1:], strict=False)]
    return module or None, {"nodes": nodes, "edges": edges, "focus": ids[idx - lo], "kind": "torch_calls"}


def module_chain_snippet(module: str, focus_label: str) -> dict[str, Any]:
    """A tiny chain model > ... > module > op, for failures known only by module path."""
    parts = module.split(".") if module else []
    ids = ["model"] + [".".join(parts[: i + 1]) for i in range(len(parts))]
    nodes = [{"id": i, "op_type": "Module", "label": i} for i in ids]
    nodes.append({"id": focus_label, "op_type": "Op", "label": focus_label})
    edges = [{"from": a, "to": b, "tensor": ""} for a, b in zip(ids, ids[1:] + [focus_label], strict=True)]
    return {"nodes": nodes, "edges": edges, "focus": focus_label, "kind": "modules"}


# -------------------------------------------------------------------------------- classification


def _min_opset_for(op: str) -> int | None:
    try:
        from torch.onnx._internal.torchscript_exporter import registration
    except ImportError:  # pragma: no cover - older layout
        try:
            from torch.onnx._internal import registration  # type: ignore[no-redef]
        except ImportError:
            return None
    try:
        group = registration.registry.get_function_group(op)
        return min(group._functions.keys()) if group is not None else None  # noqa: SLF001
    except Exception:  # noqa: BLE001
        return None


def diagnose_exception(stage: str, exc: BaseException, *, model: Any = None, exporter: str = "",
                       opset: int = 0, onnx_model: Any = None, log: Iterable[str] = ()) -> Diagnosis:
    """Classify an exception raised by the exporter, the checker or ORT loading."""
    import traceback

    text = f"{type(exc).__name__}: {exc}"
    seen = [exc]
    chain = exc.__cause__ or exc.__context__
    while chain is not None and chain not in seen:  # an explicit `raise a from b` can close a loop
        seen.append(chain)
        text += f"\ncaused by {type(chain).__name__}: {chain}"
        chain = chain.__cause__ or chain.__context__
    raw = "\n".join(list(log) + ["".join(traceback.format_exception(exc))])[-RAW_LOG_LIMIT:]
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    diag = Diagnosis(stage=stage, error_class="unknown", message=first[:500], fix="", raw_log=raw)

    m = re.search(r"operator '([\w:]+)' to ONNX opset version (\d+) is not supported", text)
    if m:
        op, at = m.group(1), int(m.group(2))
        need = re.search(r"added in version (\d+)", text)
        min_opset = int(need.group(1)) if need else _min_opset_for(op)
        diag.error_class = "unsupported_op_at_opset"
        diag.op_type = op
        diag.message = f"{op} cannot be exported at opset {at}" + (f"; it needs opset {min_opset}" if min_opset else "")
        diag.snippet, diag.module = torchscript_ir_snippet(text, op)
        if min_opset:
            diag.fix = f"re-export with --opset {min_opset}"
        else:
            diag.error_class = "unsupported_op"
            diag.message = f"{op} has no TorchScript ONNX conversion at any opset"
            diag.fix = ("switch to --exporter dynamo" + (f", or avoid {op} in {diag.module}" if diag.module else ""))
        diag.node = diag.snippet["focus"] if diag.snippet else op
        if diag.snippet is None and diag.module:
            diag.snippet = module_chain_snippet(diag.module, op)
        return diag
    if "enable_gqa" in text:
        diag.error_class = "gqa_sdpa"
        diag.op_type = "aten::scaled_dot_product_attention"
        diag.message = ("scaled_dot_product_attention with grouped-query attention (enable_gqa=True) "
                        f"has no {exporter or 'TorchScript'} ONNX conversion")
        diag.fix = "switch to --exporter dynamo, or load with attn_implementation='eager' (--attn-implementation eager)"
        diag.module = _attention_module(model)
        if diag.module:
            diag.snippet = module_chain_snippet(diag.module, "scaled_dot_product_attention(enable_gqa=True)")
        return diag
    if re.search(r"data.dependent|GuardOnDataDependentSymNode|Could not guard on|unbacked", text, re.I):
        diag.error_class = "data_dependent_control_flow"
        frames = user_frames(text + "\n" + raw)
        diag.module = next((mod for f, n in reversed(frames) if (mod := module_at(model, f, n))), None)
        loc = next(((f, n) for f, n in reversed(frames) if module_at(model, f, n)), frames[-1] if frames else None)
        where = f" at {Path(loc[0]).name}:{loc[1]}" if loc else ""
        diag.message = (f"the forward branches on a tensor value{where}"
                        f"{f' (module {diag.module})' if diag.module else ''}: the exporter cannot guard on it")
        diag.fix = ("rewrite the branch with torch.where (both paths in the graph) or torch.cond, or move the "
                    "decision out of forward; for a fixed input pattern export with --exporter torchscript and "
                    "check parity on padded inputs")
        if diag.module is not None:
            diag.snippet = module_chain_snippet(diag.module, f"if <tensor>{where}")
            diag.node = diag.snippet["focus"]
        return diag
    if re.search(r"Constraints violated|specialized|not all values of|guard.*==", text, re.I):
        diag.error_class = "shape_not_dynamic"
        m2 = re.search(r"Not all values of (\w+)", text)
        diag.message = first[:500]
        diag.fix = (f"the model fixes {m2.group(1) if m2 else 'a dimension'} to a constant: drop it from --dynamic "
                    "or give it a range the model supports")
        return diag
    if re.search(r"exceeds the size limit|larger than the 2GiB|2GB limit|2 ?GiB limit", text):
        diag.error_class = "protobuf_limit"
        diag.message = f"{first[:300]} (protobuf cannot hold a model past 2 GB in one message)"
        diag.fix = ("keep the weights in a data file beside the graph: export with --external-data (on by default "
                    "past 1.8 GB) and pass the .onnx by path to every tool; a tool that parses the whole file in "
                    "memory cannot take it")
        return diag
    node = re.search(r"node(?: with name)? \(?'?([\w/.:\-]+)'?\)?", text)
    if stage in ("checker", "shape_inference", "ort_load"):
        opm = re.search(r"implementation for (\w+)\((\d+)\)", text)
        diag.node = node.group(1) if node else None
        if opm:
            diag.error_class = "unsupported_op_at_runtime"
            diag.op_type = opm.group(1)
            diag.message = f"ONNX Runtime has no kernel for {opm.group(1)} at opset {opm.group(2)} with these types"
            diag.fix = "re-export with another --opset (17 is the safest) or cast the input to float32"
        elif re.search(r"type|dtype|tensor\((\w+)\)", text, re.I):
            diag.error_class = "dtype"
            diag.fix = "check the input dtypes of the signature (ids int64, pixels float32) and re-export"
        else:
            diag.error_class = "invalid_graph"
            other = "another --opset" if opset == 17 else "--opset 17"
            diag.fix = (f"re-export with {other}{f' (this one is opset {opset})' if opset else ''} or "
                        f"--exporter {'torchscript' if exporter == 'dynamo' else 'dynamo'}; report the raw log if "
                        "it persists")
        if onnx_model is not None and diag.node:
            diag.snippet = onnx_snippet(onnx_model, focus_node=diag.node)
            if diag.snippet:
                diag.op_type = diag.op_type or next(
                    (n["op_type"] for n in diag.snippet["nodes"] if n["id"] == diag.node), None)
        return diag
    if re.search(r"dtype|Expected .* but got|type mismatch", text, re.I):
        diag.error_class = "dtype"
        diag.fix = "check the input dtypes of the signature (ids int64, pixels float32)"
        return diag
    diag.error_class = "exporter_error"
    diag.fix = (f"try --exporter {'dynamo' if exporter != 'dynamo' else 'torchscript'} or --opset 18; "
                "the raw log has the exporter's own message")
    frames = user_frames(raw)
    diag.module = next((mod for f, n in reversed(frames) if (mod := module_at(model, f, n))), None)
    return diag


def _attention_module(model: Any) -> str | None:
    if model is None:
        return None
    for name, mod in model.named_modules():
        if type(mod).__name__.endswith("Attention") and hasattr(mod, "num_key_value_groups"):
            if getattr(mod, "num_key_value_groups", 1) > 1:
                return _strip_wrapper(name)
    return None


def diagnose_parity(cases: list[ValidationCase], *, tracer_warnings: list[dict[str, Any]], model: Any,
                    onnx_model: Any, atol: float, rtol: float, log: Iterable[str] = ()) -> Diagnosis:
    """Why ORT and PyTorch disagree: a traced branch, a size baked in, or plain numeric drift."""
    failed = [c for c in cases if not c.passed]
    first = failed[0]
    bad_outputs = [o.output for o in first.outputs if not o.passed]
    focus_tensor = bad_outputs[0] if bad_outputs else None
    raw = "\n".join(list(log) + [f"{c.graph} / {c.name}: {'ok' if c.passed else c.error or 'mismatch'} "
                                 + ", ".join(f"{o.output} abs={o.max_abs:.3g} rel={o.max_rel:.3g}"
                                             for o in c.outputs) for c in cases])[-RAW_LOG_LIMIT:]
    diag = Diagnosis(stage="parity", error_class="numerical_mismatch", message="", fix="", raw_log=raw)
    traced_ok = bool(cases) and cases[0].passed
    branch = [w for w in tracer_warnings if re.search(r"Python boolean|Python value|Python number", w["message"])]
    if branch and traced_ok:
        w = branch[0]
        diag.error_class = "data_dependent_control_flow"
        diag.module = module_at(model, w["filename"], w["lineno"])
        where = f"{Path(w['filename']).name}:{w['lineno']}"
        diag.message = (f"'{first.name}' diverges ({', '.join(bad_outputs) or first.error}) while the traced "
                        f"shapes match: the trace converted a tensor to a Python value at {where}"
                        f"{f' in module {diag.module}' if diag.module else ''}, so one branch was frozen")
        diag.fix = ("rewrite the branch with torch.where so both paths are in the graph (or torch.cond with "
                    "--exporter dynamo); do not branch on tensor values in forward")
    elif traced_ok and first.error and ("declared shape" in first.error or "ONNX Runtime failed" in first.error
                                        or "has shape" in first.error):
        diag.error_class = "shape_not_dynamic"
        diag.message = f"'{first.name}': {first.error[:400]}"
        diag.fix = ("declare the changed axes dynamic (--dynamic batch,sequence) and make sure the model does not "
                    "bake a size in; check the graph for Reshape nodes with constant shapes")
    elif traced_ok:
        diag.error_class = "shape_not_dynamic"
        diag.message = (f"traced shapes match but '{first.name}' diverges on {', '.join(bad_outputs)}: a size or "
                        "value from the trace was baked into the graph")
        diag.fix = "declare sequence as dynamic (--dynamic batch,sequence) or export with --exporter dynamo"
    elif first.error and first.error.startswith("ONNX Runtime failed"):
        diag.error_class = "runtime_error"
        diag.message = f"'{first.name}': {first.error[:400]}"
        diag.fix = ("the graph loads but does not run on the traced inputs: re-export with --exporter "
                    f"{'dynamo' if 'dynamo' not in raw else 'torchscript'} or another --opset; see the raw log")
        node = re.search(r"node\. Name:'([^']+)'", first.error)
        if node and onnx_model is not None:
            diag.snippet = onnx_snippet(onnx_model, focus_node=node.group(1))
    else:
        worst = max(first.outputs, key=lambda o: o.max_abs, default=None)
        diag.message = (f"'{first.name}' differs on {', '.join(bad_outputs) or 'outputs'}"
                        + (f": max abs {worst.max_abs:.3g}, max rel {worst.max_rel:.3g} "
                           f"(atol {atol:g}, rtol {rtol:g})" if worst else "") + (f"; {first.error}" if first.error else ""))
        diag.fix = ("if the difference is small, loosen --atol/--rtol; otherwise re-export with --exporter dynamo "
                    "or another --opset and compare")
    if onnx_model is not None and focus_tensor:
        diag.snippet = onnx_snippet(onnx_model, focus_tensor=focus_tensor)
        if diag.snippet:
            diag.node = diag.snippet["focus"]
            diag.op_type = next((n["op_type"] for n in diag.snippet["nodes"] if n["id"] == diag.node), None)
    if diag.snippet is None and diag.module:
        diag.snippet = module_chain_snippet(diag.module, "branch")
    return diag


def diagnose_tokenizer(found: str | None, expected: str | None, model_type: str) -> str | None:
    """A warning text when the tokenizer family on disk is not what the model type expects."""
    if not found or not expected:
        return None
    def norm(s: str) -> str:
        return s.removesuffix("Fast")
    if norm(found) != norm(expected):
        return (f"tokenizer_mismatch: the folder's tokenizer is {found} but {model_type} models expect {expected}; "
                "ids will not match the embedding table (copy the tokenizer files of the original checkpoint)")
    return None


def fix_for_unexpected(exc: BaseException, stage: str, where: Any, options: Any) -> str:
    """A fix that fits an unforeseen failure's cause: an exporter's internal conversion error (try the other
    exporter / opset), a shape or dtype refusal in the model's code (the inputs), or the model's own code."""
    text = f"{type(exc).__name__}: {exc}"
    other = "dynamo" if getattr(options, "exporter", "torchscript") == "torchscript" else "torchscript"
    src = f" at {where.source}" if getattr(where, "source", None) else ""
    if "/torch/onnx/" in "".join(_tb_files(exc)) or re.search(r"symbolic|onnx|opset", text, re.I):
        return (f"the {getattr(options, 'exporter', 'torchscript')} exporter could not convert the model's code{src}: "
                f"try --exporter {other}" + (" --opset 18" if other == "dynamo" else " --opset 17"))
    if re.search(r"shape|size|dimension|dtype|expected", text, re.I):
        return (f"the model's code{src} refused the example inputs of stage '{stage}': check the processor files "
                "and config.json sizes against each other (the report's example_inputs says what was used)")
    return (f"an unforeseen {type(exc).__name__} in stage '{stage}'{src}: the raw log has the traceback; check the "
            "model folder against its config, or report it with the log")


def _tb_files(exc: BaseException) -> list[str]:
    files = []
    tb = exc.__traceback__
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return files

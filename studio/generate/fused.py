"""A CPU-runtime variant of the exported decoder: each layer's attention as one ``GroupQueryAttention`` node.

The exported graph stays portable ONNX (validated, loaded by onnxruntime-genai as it is). Its attention per layer
is about a hundred small ops after ORT's optimizer: RoPE as Slice/Neg/Concat/Mul/Add, the cache Concat, the
repeat of the KV heads as Unsqueeze/Expand/Reshape (a copy of the whole cache each step), the mask as
Equal/Where/Add, and the Shape/Gather/Unsqueeze/Concat chains of every Reshape. At hidden 512 x 8 layers one
decode step is ~6.5 ms of MatMul (the weights read once) and ~2 ms of those small ops (BENCHMARKS.md). The
studio runtime is batch 1 with an all-ones mask, where ORT's contrib ``GroupQueryAttention`` (RoPE, cache concat,
GQA and softmax in one kernel; what onnxruntime-genai's own builder emits) computes the same: this module
rewrites the graph at session creation into a temporary file that ORT loads by path (from bytes ORT keeps a
second copy of the weights: +87 MB resident at hidden 512) and that goes once the session holds it.

Applies to Qwen2 / Llama models with full attention and the default RoPE over the whole head (``FAMILIES``,
``not_covered``), head_dim a multiple of 16 (ORT's CPU kernel), a float32 cache, layers under the exporter's scope
names (``/model/model/layers.{i}/self_attn/{q,k,v,o}_proj/``) and a model under 2 GB (one protobuf); otherwise
:func:`fuse_attention` returns the reason and the runtime keeps the exported graph.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.generate.config import CacheLayout

SCOPE = "/model/model/layers.{}/self_attn/"
MS_DOMAIN = "com.microsoft"
MAX_BYTES = 2**31 - 2**26  # one protobuf; larger exports keep their graph
# attention = softmax(q k^T / sqrt(head_dim)) over RoPE'd q, k straight out of the projections: families checked
# token-exact against HF (tests/generate/test_fused_attention.py for qwen2); others (q/k norms as Qwen3, a scaled
# query as Gemma, sliding windows as Mistral) keep the exported graph
FAMILIES = ("qwen2", "llama")


@dataclass
class Fused:
    """Where the rewritten model was written, and what changed (node counts before / after, the GQA nodes)."""

    path: Path
    nodes_before: int
    nodes_after: int
    attention_nodes: int
    data_dir: Path | None = None  # the exported model's folder when its weights are in a data file there


def session_source(fused: Fused, options: Any) -> Any:
    """What ``InferenceSession`` takes for the rewritten graph: its path, or (weights in the export's data file)
    its bytes with ONNX Runtime told the folder its data file lives in (the rewrite is written elsewhere)."""
    if fused.data_dir is None:
        return str(fused.path)
    options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(fused.data_dir))
    return fused.path.read_bytes()


def not_covered(config: dict[str, Any]) -> str | None:
    """Why this model's attention is not the plain one the rewrite builds, or None."""
    mt = str(config.get("model_type"))
    if mt not in FAMILIES:
        return f"model type {mt!r} (fused: {', '.join(FAMILIES)})"
    if config.get("use_sliding_window") or (mt != "qwen2" and config.get("sliding_window")):
        return "a sliding attention window"
    if any(t != "full_attention" for t in config.get("layer_types") or []):
        return "layers other than full attention"
    return None


def rope_tables(config: dict[str, Any], head_dim: int, positions: int) -> tuple[np.ndarray, np.ndarray] | str:
    """cos / sin caches (positions, head_dim / 2) of a default RoPE, or why the config is not one."""
    rope = dict(config.get("rope_parameters") or config.get("rope_scaling") or {})
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind != "default":
        return f"rope_type {kind!r} (only the default RoPE is fused)"
    if float(config.get("partial_rotary_factor", rope.get("partial_rotary_factor", 1.0))) != 1.0:
        return "partial rotary (only the full head rotated is fused)"
    theta = float(rope.get("rope_theta", config.get("rope_theta", 10000.0)))
    inv = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.int64).astype(np.float32) / head_dim))
    freqs = np.outer(np.arange(positions, dtype=np.float32), inv)
    return np.cos(freqs).astype(np.float32), np.sin(freqs).astype(np.float32)


def _projection_output(nodes: list[Any], scope: str) -> str | None:
    """The tensor a projection's scope hands on: the one output of its nodes read outside the scope."""
    inside = [n for n in nodes if n.name.startswith(scope)]
    produced = {o for n in inside for o in n.output}
    read_outside = {i for n in nodes if not n.name.startswith(scope) for i in n.input}
    out = [t for t in produced if t in read_outside]
    return out[0] if len(out) == 1 else None


def fuse_attention(model_path: Path, layout: CacheLayout, config: dict[str, Any], max_positions: int,
                   out: Path) -> Fused | str:
    """Write to ``out`` the exported decoder with each layer's attention as one GroupQueryAttention, or say why
    not (nothing written then)."""
    import onnx
    from onnx import helper, numpy_helper

    if model_path.stat().st_size > MAX_BYTES:
        return "the model is over 2 GB (one protobuf)"
    if layout.head_dim % 16:
        return f"head_dim {layout.head_dim} (ORT's GroupQueryAttention wants a multiple of 16)"
    why = not_covered(config)
    if why:
        return why
    tables = rope_tables(config, layout.head_dim, max_positions)
    if isinstance(tables, str):
        return tables
    model = onnx.load(str(model_path), load_external_data=False)  # weights in a data file stay there
    graph = model.graph
    names = {i.name for i in graph.input}
    if not {"input_ids", "attention_mask"} <= names:
        return "the graph has no input_ids / attention_mask"
    if model.ByteSize() > MAX_BYTES:
        return "the model is over 2 GB (one protobuf)"
    cache_type = next((i.type.tensor_type.elem_type for i in graph.input if i.name == layout.past_names()[0]), None)
    if cache_type != onnx.TensorProto.FLOAT:
        return "the cache is not float32 (a float16 cache sits behind Casts the fusion does not follow)"
    cos, sin = tables
    nodes = list(graph.node)
    before = len(nodes)
    plan: list[tuple[int, str, str, str, Any]] = []
    for i in range(layout.layers):
        scope = SCOPE.format(i)
        q, k, v = (_projection_output(nodes, f"{scope}{p}_proj/") for p in ("q", "k", "v"))
        o_proj = [n for n in nodes if n.name.startswith(f"{scope}o_proj/") and n.op_type == "MatMul"]
        if not (q and k and v) or len(o_proj) != 1:
            return f"layer {i}: the q/k/v/o projections are not where the exporter puts them ({scope})"
        if any(n.name.startswith(scope) and "norm/" in n.name for n in nodes):
            return f"layer {i}: a norm inside the attention ({scope})"
        plan.append((i, q, k, v, o_proj[0]))
    pk, pv = layout.past_names()[0::2], layout.past_names()[1::2]
    rk, rv = layout.present_names()[0::2], layout.present_names()[1::2]
    for n in nodes:  # the exported present.* producers go dead (the GQA nodes write those names)
        n.output[:] = [o + "__unfused" if o in set(rk) | set(rv) else o for o in n.output]
    added = [
        helper.make_node("ReduceSum", ["attention_mask", "studio_fused_axis1"], ["studio_fused_total64"],
                         keepdims=0),
        helper.make_node("Sub", ["studio_fused_total64", "studio_fused_one"], ["studio_fused_seqlens64"]),
        helper.make_node("Cast", ["studio_fused_seqlens64"], ["studio_fused_seqlens_k"], to=onnx.TensorProto.INT32),
        helper.make_node("Shape", ["attention_mask"], ["studio_fused_mask_shape"], start=1, end=2),
        helper.make_node("Squeeze", ["studio_fused_mask_shape"], ["studio_fused_total_len64"]),
        helper.make_node("Cast", ["studio_fused_total_len64"], ["studio_fused_total_len"],
                         to=onnx.TensorProto.INT32),
    ]
    graph.initializer.extend([numpy_helper.from_array(np.array([1], np.int64), "studio_fused_axis1"),
                              numpy_helper.from_array(np.array(1, np.int64), "studio_fused_one"),
                              numpy_helper.from_array(cos, "studio_fused_cos"),
                              numpy_helper.from_array(sin, "studio_fused_sin")])
    for i, q, k, v, o_proj in plan:
        attn = f"studio_fused_attn_{i}"
        added.append(helper.make_node(
            "GroupQueryAttention",
            [q, k, v, pk[i], pv[i], "studio_fused_seqlens_k", "studio_fused_total_len", "studio_fused_cos",
             "studio_fused_sin"], [attn, rk[i], rv[i]], name=f"studio_fused_gqa_{i}", domain=MS_DOMAIN,
            num_heads=layout.attention_heads, kv_num_heads=layout.kv_heads, do_rotary=1, rotary_interleaved=0,
            scale=float(layout.head_dim) ** -0.5))
        o_proj.input[0] = attn
    graph.node.extend(added)
    _drop_dead(graph)
    if not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    onnx.save(model, str(out))
    external = any(t.data_location == onnx.TensorProto.EXTERNAL for t in graph.initializer)
    return Fused(out, before, len(graph.node), layout.layers, model_path.parent if external else None)


def _drop_dead(graph: Any) -> None:
    """Nodes and initializers no graph output depends on (the unfused attention, RoPE and mask subgraphs)."""
    producer = {o: n for n in graph.node for o in n.output}
    need = {o.name for o in graph.output}
    keep: set[int] = set()
    stack = list(need)
    while stack:
        node = producer.get(stack.pop())
        if node is None or id(node) in keep:
            continue
        keep.add(id(node))
        stack += [i for i in node.input if i]
    live = [n for n in graph.node if id(n) in keep]
    order = {id(n): k for k, n in enumerate(graph.node)}
    live.sort(key=lambda n: order[id(n)])
    _toposort(live, graph)
    used = {i for n in graph.node for i in n.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def _toposort(live: list[Any], graph: Any) -> None:
    """Write ``live`` back in an order where every input is produced before it is read."""
    ready = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    pending, ordered = list(live), []
    while pending:
        rest = []
        for n in pending:
            if all(i in ready for i in n.input):
                ordered.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise ValueError("the fused graph has a cycle or a missing input")
        pending = rest
    del graph.node[:]
    graph.node.extend(ordered)


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

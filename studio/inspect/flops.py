"""Estimated FLOPs per ONNX node from the shapes alone (no weights loaded): the model statistics (``stats``) sum
them, the host-fallback cost of a target (``model_verdict``) prices the nodes that leave the accelerator.
"""

from __future__ import annotations

import functools
import math

from studio.inspect.model import LoadedModel, NodeRef

ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Pow", "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt",
               "Neg", "Abs", "Max", "Min", "Where", "Gelu", "LeakyRelu", "Clip", "HardSigmoid", "HardSwish",
               "Reciprocal", "Sin", "Cos", "Elu", "Selu", "PRelu", "Softplus", "Mish", "Equal", "Less",
               "Greater", "And", "Or", "Not", "Cast"}
COST_PER_ELEMENT = {"Softmax": 5, "LogSoftmax": 5, "LayerNormalization": 8, "BatchNormalization": 2,
                    "InstanceNormalization": 8, "GroupNormalization": 8, "SimplifiedLayerNormalization": 6,
                    "SkipLayerNormalization": 9, "RMSNormalization": 6}


def numel(shape: list | None, assumed: list[bool]) -> int:
    if shape is None:
        assumed.append(True)
        return 0
    n, dynamic = numel_of(tuple(shape))
    if dynamic:
        assumed.append(True)
    return n


@functools.lru_cache(maxsize=4096)
def numel_of(shape: tuple) -> tuple[int, bool]:
    """(element count with unknown dims as 1, whether a dim was unknown): thousands of tensors share a few
    hundred shapes."""
    n, dynamic = 1, False
    for d in shape:
        if isinstance(d, int):
            n *= max(d, 0)
        else:
            dynamic = True
    return n, dynamic


def _shape(lm: LoadedModel, name: str) -> list | None:
    t = lm.tensors.get(name)
    return None if t is None else t.shape


def _int(d: object) -> int:
    return d if isinstance(d, int) else 1


def node_flops(lm: LoadedModel, ref: NodeRef, assumed: list[bool]) -> int:
    op = ref.op_type
    if op not in _COUNTED and not op.startswith("Reduce"):
        return 0
    node = ref.node
    ins = ref.inputs
    outs = [o for o in ref.outputs if o]
    if not outs:
        return 0
    out_shape = _shape(lm, outs[0])
    if op in ("MatMul", "MatMulInteger", "FusedMatMul"):
        a = _shape(lm, ins[0])
        if a and out_shape is not None:
            return 2 * numel(out_shape, assumed) * _int(a[-1])
    elif op == "Gemm":
        a, b = _shape(lm, ins[0]), _shape(lm, ins[1])
        if a and b and out_shape is not None:
            trans_a = any(at.name == "transA" and at.i for at in node.attribute)
            k = _int(a[0] if trans_a else a[-1])
            return 2 * numel(out_shape, assumed) * k
    elif op in ("Conv", "ConvInteger", "QLinearConv"):
        w = _shape(lm, ins[3 if op == "QLinearConv" else 1])
        if w and out_shape is not None:
            return 2 * numel(out_shape, assumed) * math.prod(_int(d) for d in w[1:])
    elif op == "ConvTranspose":
        x, w = _shape(lm, ins[0]), _shape(lm, ins[1])
        if x and w:
            return 2 * numel(x, assumed) * math.prod(_int(d) for d in w[1:])
    elif op.startswith("Reduce") or op in ("GlobalAveragePool", "GlobalMaxPool"):
        return numel(_shape(lm, ins[0]), assumed) if ins else 0
    elif op in ("AveragePool", "MaxPool"):
        k = next((list(a.ints) for a in node.attribute if a.name == "kernel_shape"), [1])
        return numel(out_shape, assumed) * math.prod(k)
    elif op in ELEMENTWISE:
        return numel(out_shape, assumed)
    elif op in COST_PER_ELEMENT:
        return COST_PER_ELEMENT[op] * numel(out_shape, assumed)
    return 0


_COUNTED = {"MatMul", "MatMulInteger", "FusedMatMul", "Gemm", "Conv", "ConvInteger", "QLinearConv",
            "ConvTranspose", "GlobalAveragePool", "GlobalMaxPool", "AveragePool", "MaxPool",
            *ELEMENTWISE, *COST_PER_ELEMENT}


def total_flops(lm: LoadedModel, assumed: list[bool]) -> int:
    """Sum of node_flops; per-element ops (most nodes of a model) are counted inline, as node_flops counts
    them, to spare four calls per node."""
    tget = lm.tensors.get
    total = 0
    for ref in lm.nodes:
        op = ref.op_type
        cost = _PER_ELEMENT.get(op)
        if cost is None:
            if op in _COUNTED or op.startswith("Reduce"):
                total += safe_flops(lm, ref, assumed)
            continue
        out = next((o for o in ref.outputs if o), None)
        if out is None:
            continue
        t = tget(out)
        if t is None or t.shape is None:
            assumed.append(True)
            continue
        n, dynamic = numel_of(tuple(t.shape))
        if dynamic:
            assumed.append(True)
        total += cost * n
    return total


_PER_ELEMENT = {**{op: 1 for op in ELEMENTWISE}, **COST_PER_ELEMENT}  # op -> node_flops' cost per element


def safe_flops(lm: LoadedModel, ref: NodeRef, assumed: list[bool]) -> int:
    """Malformed nodes (missing inputs, odd shapes) count zero rather than break the report."""
    try:
        return int(node_flops(lm, ref, assumed))
    except (IndexError, TypeError, ValueError, OverflowError):
        return 0

"""TorchScript ONNX conversions the exporter lacks, registered only while the studio exports.

``aten::linalg_solve_triangular`` (gated delta-net / linear-attention chunk steps: Qwen3.5, Qwen3-Next, MiniCPM-V
4.7 ...; transformers takes it whenever it is not under torch.export): ONNX has no triangular solve, but with the
matrix's size static (the chunk size) the solve is forward (or back) substitution unrolled over its rows, row ``i``
being ``x_i = (b_i - A[i, :i] @ X[:i]) / A[i, i]``: one Slice, MatMul, Sub and Concat per row, the same arithmetic
LAPACK's substitution does (sums in another order: float rounding only). The diagonal is read only when the call is
not ``unitriangular``, the other triangle never, as in torch. The size is ONNX shape inference's, else the trace's
(the chunk size, behind a Reshape that stops a graph fed another size); with neither, or past ``MAX_ROWS``, the op
stays unconverted and the exporter's own error names it.

``aten::repeat_interleave``: torch's own conversion, given a private copy of its ``dim`` constant (torch's conversion
edits that constant in place, corrupting every other op that shares it; see ``_repeat_interleave``). ``aten::unfold``
along a dim of dynamic length: one Gather of the windows (torch's needs the length static; see ``_unfold``).
``aten::full`` with no dtype: the traced result's dtype, not torch's float32 default (see ``_full``).
``aten::slice`` with int32 bounds: cast to int64 as ONNX Slice wants them all one type (see ``_slice``).
``aten::cumsum`` of bool / small ints: cast to int64, torch's result type (ONNX CumSum takes no bool).
``aten::permute`` with negative dims: made positive for Transpose's ``perm``. ``aten::isin``: Equal against every
test value, any over them (ONNX has no isin). ``aten::__ior_``: Or (bool) / BitwiseOr, written back by TorchScript's
in-place pass. ``aten::cummax`` / ``aten::cummin``: a reduction over positions j <= i (quadratic in the length). ``aten::eye`` of
bool: built as int64 and cast (ONNX Runtime's EyeLike has no bool kernel).

Every conversion used that computes differently is a line in the export report (``used``), never a silent rewrite.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

MAX_ROWS = 512  # past this an unrolled substitution is a graph too large to be the right answer: left unconverted
OPSET = 11  # Slice with tensor starts/ends and negative axes


def _const(g: Any, values: list[int]) -> Any:
    import torch

    return g.op("Constant", value_t=torch.tensor(values, dtype=torch.int64))


def _rows(g: Any, x: Any, start: int, end: int) -> Any:
    return g.op("Slice", x, _const(g, [start]), _const(g, [end]), _const(g, [-2]))


def _entries(g: Any, a: Any, row: int, start: int, end: int) -> Any:
    return g.op("Slice", a, _const(g, [row, start]), _const(g, [row + 1, end]), _const(g, [-2, -1]))


def substitute(g: Any, a: Any, b: Any, n: int, upper: bool, unit: bool) -> Any:
    """X with A X = B for a triangular ``n`` x ``n`` A (leading dims broadcast as MatMul does), row by row."""
    order = range(n - 1, -1, -1) if upper else range(n)
    solved: Any = None  # the rows found so far, in row order: [..., m, k]
    for i in order:
        x = _rows(g, b, i, i + 1)
        if solved is not None:
            known = _entries(g, a, i, i + 1, n) if upper else _entries(g, a, i, 0, i)
            x = g.op("Sub", x, g.op("MatMul", known, solved))
        if not unit:
            x = g.op("Div", x, _entries(g, a, i, i, i + 1))
        if solved is None:
            solved = x
        else:
            solved = g.op("Concat", x, solved, axis_i=-2) if upper else g.op("Concat", solved, x, axis_i=-2)
    return solved


def _sizes(value: Any) -> list[Any]:
    from torch.onnx import symbolic_helper as sh

    return list(sh._get_tensor_sizes(value) or [])


def _traced_sizes(g: Any, index: int) -> list[int]:
    """The sizes the trace recorded for the aten node's input ``index`` (the example's: only the matrix's own, the
    chunk size, is taken from it, and guarded), [] when the trace kept none."""
    try:
        sizes = g.original_node.inputsAt(index).type().sizes()
    except Exception:  # noqa: BLE001 - an incomplete tensor type: no sizes recorded
        return []
    return [int(d) for d in sizes] if sizes is not None and all(d is not None for d in sizes) else []


def _transpose_last(g: Any, x: Any, rank: int) -> Any:
    perm = [*range(rank - 2), rank - 1, rank - 2]
    return g.op("Transpose", x, perm_i=perm)


def _make_solve(used: list[str]) -> Any:
    from torch.onnx import symbolic_helper as sh

    @sh.parse_args("v", "v", "b", "b", "b")
    def linalg_solve_triangular(g: Any, a: Any, b: Any, upper: bool, left: bool = True,
                                unitriangular: bool = False) -> Any:
        sizes, traced = _sizes(a), _traced_sizes(g, 0)
        n = sizes[-1] if len(sizes) >= 2 and isinstance(sizes[-1], int) else (traced[-1] if len(traced) >= 2 else None)
        rank_a = len(sizes) or len(traced)
        rank_b = sh._get_tensor_rank(b) or len(_traced_sizes(g, 1)) or None
        if not isinstance(n, int) or n > MAX_ROWS or rank_b is None or rank_a < 2:
            return sh._unimplemented("aten::linalg_solve_triangular",
                                     f"the matrix size must be known and at most {MAX_ROWS} (got {n})", a)
        guarded = not (len(sizes) >= 2 and sizes[-1] == n and sizes[-2] == n)
        if guarded:  # the size is the trace's: a graph fed another size fails here, never solves the wrong system
            a = g.op("Reshape", a, _const(g, [0] * (rank_a - 2) + [n, n]))
        if left:
            out = substitute(g, a, b, n, upper, unitriangular)
        else:  # X A = B  <=>  A^T X^T = B^T, the other triangle
            out = _transpose_last(g, substitute(g, _transpose_last(g, a, rank_a), _transpose_last(g, b, rank_b),
                                                n, not upper, unitriangular), rank_b)
        note = (f"aten::linalg_solve_triangular ({n}x{n}, {'upper' if upper else 'lower'}"
                f"{', unit diagonal' if unitriangular else ''}) has no ONNX operator: exported as "
                f"{'back' if upper == left else 'forward'} substitution unrolled over its {n} rows "
                "(same arithmetic, float rounding only; parity checks it)"
                + (f"; {n} is the traced size (the chunk size), a graph fed another size stops at a Reshape"
                   if guarded else ""))
        if note not in used:
            used.append(note)
        return out

    return linalg_solve_triangular


def _repeat_interleave(g: Any, x: Any, repeats: Any, dim: Any = None, output_size: Any = None) -> Any:
    """torch's own ``aten::repeat_interleave`` given a private copy of a constant ``dim``: torch adds the rank to a
    negative dim in place (``dim += len(input_sizes)``) on the tensor inside the shared Constant node, so every
    later op reading that constant (-1, pooled) gets the rank added too. GLM-4.1V's rotary
    (``repeat_interleave(2, dim=-1)``, then ``stack(...).flatten(-2)``) has its flatten end turned from -1 into 2
    and the export stops at a ``cat`` ("All tensors must have the same rank"); a wrong graph is possible too. Same
    ONNX result otherwise: no report line."""
    import torch
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh
    from torch.onnx._internal.torchscript_exporter import symbolic_opset9, symbolic_opset13

    if dim is not None and not sh._is_none(dim) and sh._is_constant(dim):
        dim = g.op("Constant", value_t=torch.tensor(int(sh._maybe_get_const(dim, "i")), dtype=torch.int64))
    builtin = symbolic_opset13 if g.opset >= 13 else symbolic_opset9
    return builtin.repeat_interleave(g, x, repeats, dim, output_size)


def _unfold(g: Any, x: Any, dimension: Any, size: Any, step: Any) -> Any:
    """``aten::unfold`` (sliding windows) along a dim whose length only the graph knows: torch's conversion needs it
    static ("input size not accessible": Idefics2/3's patch masks, Inkling2's short convolution). The windows are
    one Gather with indices ``start_i + arange(size)``, ``start_i = i * step`` for the ``(L - size) // step + 1``
    windows, the window axis moved last as torch puts it: the same elements, nothing to report. A static length or
    a size / step that is not a constant keeps torch's conversion."""
    import torch
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh
    from torch.onnx._internal.torchscript_exporter import symbolic_opset9, symbolic_opset12

    builtin = symbolic_opset12 if g.opset >= 12 else symbolic_opset9
    dim = sh._get_const(dimension, "i", "dimension")
    k, st = sh._maybe_get_const(size, "i"), sh._maybe_get_const(step, "i")
    rank = sh._get_tensor_rank(x) or len(_traced_sizes(g, 0)) or None
    if sh._is_value(k) or sh._is_value(st) or rank is None or sh._get_tensor_dim_size(x, dim) is not None:
        return builtin.unfold(g, x, dimension, size, step)
    dim = dim + rank if dim < 0 else dim
    length = g.op("Gather", g.op("Shape", x), g.op("Constant", value_t=torch.tensor(dim, dtype=torch.int64)), axis_i=0)
    k_t, st_t = (g.op("Constant", value_t=torch.tensor(int(v), dtype=torch.int64)) for v in (k, st))
    count = g.op("Add", g.op("Div", g.op("Sub", length, k_t), st_t),
                 g.op("Constant", value_t=torch.tensor(1, dtype=torch.int64)))
    starts = g.op("Mul", g.op("Range", g.op("Constant", value_t=torch.tensor(0, dtype=torch.int64)), count,
                              g.op("Constant", value_t=torch.tensor(1, dtype=torch.int64))), st_t)
    index = g.op("Add", g.op("Reshape", starts, _const(g, [-1, 1])),
                 g.op("Constant", value_t=torch.arange(int(k), dtype=torch.int64)[None]))
    windows = g.op("Gather", x, index, axis_i=dim)  # [..., count, size, ...]
    perm = [*range(dim + 1), *range(dim + 2, rank + 1), dim + 1]
    return g.op("Transpose", windows, perm_i=perm)


def _full(g: Any, sizes: Any, value: Any, dtype: Any, layout: Any, device: Any, pin_memory: Any = False) -> Any:
    """torch's ``aten::full`` given the dtype torch gave the result when the call names none: torch's conversion
    makes it float32 whatever the fill (``torch.full(size, 0)`` is int64 in torch), so an index built on it
    (Idefics2/3's patch position ids, ``torch.where(mask, ids, full)``) reaches a Gather as float and the checker
    refuses the graph. The dtype is the traced result's: the values torch computes, nothing to report."""
    from torch.onnx._internal.torchscript_exporter import _type_utils, symbolic_opset9
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    if dtype is None or sh._is_none(dtype):
        try:
            traced = g.original_node.output().type().dtype()
        except Exception:  # noqa: BLE001 - no traced dtype: torch's default stands
            traced = None
        if traced is not None:
            dtype = int(_type_utils.JitScalarType.from_dtype(traced))
    return symbolic_opset9.full(g, sizes, value, dtype, layout, device, pin_memory)


def _slice(g: Any, x: Any, *args: Any) -> Any:
    """torch's ``aten::slice`` with int32 bounds made int64 first: a bound read from an int32 tensor
    (``hidden[0, start:start + h * w]`` with ``h, w`` from MiniCPM-V's int32 ``target_sizes``) went into ONNX Slice
    beside int64 ones, which the checker refuses ("ends has inconsistent type tensor(int32)"). Same values."""
    from torch.onnx._internal.torchscript_exporter import _type_utils, symbolic_opset9, symbolic_opset10
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    int32 = _type_utils.JitScalarType.INT
    bounds = [g.op("Cast", v, to_i=_type_utils.JitScalarType.INT64.onnx_type())
              if sh._is_value(v) and not sh._is_none(v) and not sh._is_constant(v)
              and _type_utils.JitScalarType.from_value(v, _type_utils.JitScalarType.UNDEFINED) == int32 else v
              for v in args[-3:]]
    builtin = symbolic_opset10 if g.opset >= 10 else symbolic_opset9
    return builtin.slice(g, x, *args[:-3], *bounds)


def _cumsum(g: Any, x: Any, dim: Any, dtype: Any = None) -> Any:
    """torch's ``aten::cumsum`` with a bool / small-integer input made int64 first, as torch's result is: ONNX
    CumSum takes no bool (GLM-5's ``(ids == start).cumsum(-1)`` video-span test failed the checker: "x has
    unsupported type: tensor(bool)") and int32 would leave the graph's type where torch's is int64. Same values."""
    from torch.onnx._internal.torchscript_exporter import _type_utils, symbolic_opset11
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    t = _type_utils.JitScalarType
    if (dtype is None or sh._is_none(dtype)) and t.from_value(x, t.UNDEFINED) in (t.BOOL, t.UINT8, t.INT8, t.INT16,
                                                                                   t.INT):
        x = g.op("Cast", x, to_i=t.INT64.onnx_type())
    return symbolic_opset11.cumsum(g, x, dim, dtype)


def _permute(g: Any, x: Any, dims: list[int]) -> Any:
    """torch's ``aten::permute`` with negative dims made positive: torch writes them into Transpose's ``perm`` as
    they are (``permute(0, -2, -1, 1)``: NeMo's mixer), which ONNX refuses ("Invalid attribute perm"). Same values."""
    from torch.onnx._internal.torchscript_exporter import symbolic_opset9

    return symbolic_opset9.permute(g, x, [d + len(dims) if d < 0 else d for d in dims])


def _isin(g: Any, elements: Any, test: Any, assume_unique: Any = None, invert: Any = None) -> Any:
    """``aten::isin`` (ONNX has none; Grounding DINO's special-token mask ``torch.isin(input_ids, special_ids)``):
    each element compared with every test value (flattened to one trailing axis), any hit over it; ``invert``
    negates. Same values."""
    from torch.onnx._internal.torchscript_exporter import _type_utils
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    flat = g.op("Reshape", test, _const(g, [-1]))
    hits = g.op("Cast", g.op("Equal", sh._unsqueeze_helper(g, elements, [-1]), flat),
                to_i=_type_utils.JitScalarType.INT64.onnx_type())
    out = g.op("Greater", sh._reducesum_helper(g, hits, axes_i=[-1], keepdims_i=0), _const(g, [0]))
    return g.op("Not", out) if invert is not None and not sh._is_none(invert) and sh._maybe_get_const(invert, "b") \
        else out


def _cumulative(reduce: str) -> Any:
    """``aten::cummax`` / ``aten::cummin`` (ONNX has neither; Grounding DINO's previous / next special token): row i
    of the result is the max (min) over positions j <= i, taken as a reduction over a [.., i, j, ..] view where the
    positions past i hold the input's global min (max); the index is the last j <= i holding that value, as torch's.
    Quadratic in the scanned length (a prompt's tokens here). Same values."""
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    @sh.parse_args("v", "i")
    def convert(g: Any, x: Any, dim: int) -> Any:
        rank = sh._get_tensor_rank(x)
        if rank is None:
            return sh._unimplemented(f"aten::cum{reduce}", "input of unknown rank", x)
        d = dim % rank
        n = g.op("Gather", g.op("Shape", x), _const(g, [d]), axis_i=0)  # [1]
        count = sh._squeeze_helper(g, n, [0])
        span = g.op("Range", g.op("Constant", value_t=_scalar(0)), count, g.op("Constant", value_t=_scalar(1)))
        trailing = _const(g, [1] * (rank - 1 - d)) if rank - 1 - d else None
        i_pos = g.op("Reshape", span, g.op("Concat", *[n, _const(g, [1])] + ([trailing] if trailing else []),
                                            axis_i=0))
        j_pos = g.op("Reshape", span, g.op("Concat", *[_const(g, [1]), n] + ([trailing] if trailing else []),
                                            axis_i=0))
        seen = g.op("LessOrEqual", j_pos, i_pos)  # [n_i, n_j, 1...]: j <= i
        cols = sh._unsqueeze_helper(g, x, [d])  # [.., 1, n_j, ..]
        fill = g.op("ReduceMin" if reduce == "max" else "ReduceMax", x, keepdims_i=0)  # below (above) every value
        view = g.op("Where", seen, cols, fill)
        values = _reduce(g, "ReduceMax" if reduce == "max" else "ReduceMin", view, d + 1)
        hit = g.op("And", seen, g.op("Equal", cols, sh._unsqueeze_helper(g, values, [d + 1])))
        last = g.op("Where", hit, g.op("Expand", j_pos, g.op("Shape", view)), g.op("Constant", value_t=_scalar(-1)))
        return values, _reduce(g, "ReduceMax", last, d + 1)

    return convert


def _reduce(g: Any, op: str, x: Any, axis: int) -> Any:
    if g.opset >= 18:  # axes became an input
        return g.op(op, x, _const(g, [axis]), keepdims_i=0)
    return g.op(op, x, axes_i=[axis], keepdims_i=0)


def _scalar(v: int) -> Any:
    import torch

    return torch.tensor(v, dtype=torch.int64)


def _eye(g: Any, *args: Any) -> Any:
    """torch's ``aten::eye``, a bool identity built as int64 and cast: ONNX Runtime has no EyeLike kernel for bool
    (Grounding DINO's ``torch.eye(n, dtype=torch.bool)`` text mask loaded in no session). Same values."""
    import torch
    from torch.onnx._internal.torchscript_exporter import _type_utils, symbolic_opset9
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    t = _type_utils.JitScalarType
    at = len(args) - 4  # the dtype's place: eye(n, dtype, ...) or eye(n, m, dtype, ...)
    dtype = args[at] if at >= 1 else None
    if dtype is None or sh._is_none(dtype) or sh._maybe_get_const(dtype, "i") != int(t.BOOL):
        return symbolic_opset9.eye(g, *args)
    as_int = g.op("Constant", value_t=torch.tensor(int(t.INT64), dtype=torch.int64))
    eye = symbolic_opset9.eye(g, *args[:at], as_int, *args[at + 1:])
    return g.op("Cast", eye, to_i=t.BOOL.onnx_type())


def _ior(g: Any, a: Any, b: Any) -> Any:
    """``aten::__ior_`` (``mask[0] |= ~torch.any(mask)``: SmolVLM's "leave one empty image"): Or for bools,
    BitwiseOr for integers; TorchScript's in-place pass writes the result back into the indexed view. Same values."""
    from torch.onnx._internal.torchscript_exporter import _type_utils

    t = _type_utils.JitScalarType
    return g.op("Or" if t.from_value(a, t.BOOL) == t.BOOL else "BitwiseOr", a, b)


def _conversions(used: list[str]) -> dict[str, Any]:
    from torch.onnx._internal.torchscript_exporter import symbolic_helper as sh

    return {"aten::linalg_solve_triangular": _make_solve(used), "aten::repeat_interleave": _repeat_interleave,
            "aten::unfold": _unfold, "aten::full": _full, "aten::slice": _slice,
            "aten::cumsum": _cumsum, "aten::permute": sh.parse_args("v", "is")(_permute), "aten::isin": _isin,
            "aten::__ior_": _ior, "aten::cummax": _cumulative("max"), "aten::cummin": _cumulative("min"),
            "aten::eye": _eye}


@contextlib.contextmanager
def torchscript_symbolics(used: list[str]) -> Iterator[None]:
    """Register the conversions above for the TorchScript exporter while the block runs; each one the export used
    that changes how the result is computed appends its report line to ``used``."""
    import torch
    from torch.onnx import _constants
    from torch.onnx._internal.torchscript_exporter import registration

    conversions = _conversions(used)
    had = {name for name in conversions if registration.registry.get_function_group(name) is not None}
    # at every opset: the exporter takes the newest registration at or below the export's, built-ins included
    opsets = range(OPSET, _constants.ONNX_MAX_OPSET + 1)
    for name, fn in conversions.items():
        for opset in opsets:
            torch.onnx.register_custom_op_symbolic(name, fn, opset)
    try:
        yield
    finally:
        for name in conversions:
            for opset in opsets:
                torch.onnx.unregister_custom_op_symbolic(name, opset)
            if name not in had:  # torch leaves an empty group behind, which then fails its "unsupported op" message
                registration.registry._registry.pop(name, None)

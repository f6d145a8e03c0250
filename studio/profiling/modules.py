"""Which torch module each ONNX node came from, from what the exporter left in the graph (no torch here).

- TorchScript export names nodes by module scope: ``/model/vision_model/encoder/layers.0/self_attn/MatMul``
  (``/model`` is the export wrapper's attribute, ``layers.0`` a ModuleList index).
- dynamo export keeps the scope in node metadata: ``pkg.torch.onnx.name_scopes`` (a list, innermost last) or
  ``namespace`` (``"vision_model.encoder.layers.0.self_attn: CLIPAttention/..."``).

``map_nodes`` returns node key -> dotted module path relative to the HF model
(``vision_model.encoder.layers.0.self_attn``); the wrapper prefix is found against the model's module names
when they are known, else by the longest prefix shared by every scoped node.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from studio.profiling.report import ModuleTime, ProfileReport

NAME_SCOPES = "pkg.torch.onnx.name_scopes"


def _scope_from_metadata(node: Any) -> str | None:
    props = {p.key: p.value for p in node.metadata_props}
    if NAME_SCOPES in props:
        try:
            scopes = ast.literal_eval(props[NAME_SCOPES])
        except (ValueError, SyntaxError):
            scopes = []
        scopes = [s for s in scopes if isinstance(s, str) and s]
        if scopes:
            return scopes[-1]
    ns = props.get("namespace")
    if ns:
        # "a.b.c: Type/a.b.c.d: Type2/..." -> innermost dotted path
        parts = [p.split(":", 1)[0].strip() for p in ns.split("/") if p.strip()]
        parts = [p for p in parts if p]
        if parts:
            return parts[-1]
    return None


def _scope_from_name(name: str) -> str | None:
    if not name.startswith("/") or name.count("/") < 2:
        return None
    return ".".join(name.strip("/").split("/")[:-1])


def node_scope(node: Any) -> str | None:
    """One node's scope for grouping (dotted, wrapper prefix on): its name-scope metadata, else its name path
    (``/a/b/Op`` from TorchScript, also ``a/b/op`` as other converters and hand-built graphs write them)."""
    if len(node.metadata_props):
        s = _scope_from_metadata(node)
        if s:
            return s
    name = node.name
    if "/" in name.strip("/"):
        return ".".join(p for p in name.strip("/").split("/")[:-1] if p) or None
    return None


def raw_scopes(model: Any) -> tuple[dict[str, str], str]:
    """node key -> exporter scope (dotted, wrapper prefix still on), and where it came from."""
    from studio.profiling.ort import node_keys

    by_meta: dict[str, str] = {}
    by_name: dict[str, str] = {}
    for key, node in node_keys(model.graph):
        s = _scope_from_metadata(node)
        if s:
            by_meta[key] = s
        s = _scope_from_name(node.name)
        if s:
            by_name[key] = s
    if len(by_meta) >= len(by_name) and by_meta:
        return by_meta, "metadata"
    return by_name, "node names"


def _strip_prefix(scopes: dict[str, str], modules: Iterable[str] | None) -> dict[str, str]:
    """Drop the export wrapper's prefix (``model.``) so scopes are module paths of the HF model."""
    mods = set(modules or [])
    if mods:
        tops = {m.split(".")[0] for m in mods if m}
        best: dict[str, int] = {}
        for s in scopes.values():
            segs = s.split(".")
            for i, seg in enumerate(segs):
                if seg in tops:
                    pre = ".".join(segs[:i])
                    best[pre] = best.get(pre, 0) + 1
                    break
        prefix = max(best, key=lambda p: best[p]) if best else ""
    else:  # no module list: a first segment every scoped node shares (the export wrapper's attribute), when
        # what follows it branches into several modules
        segs = [s.split(".") for s in scopes.values() if s]
        firsts = {x[0] for x in segs}
        seconds = {x[1] for x in segs if len(x) > 1}
        prefix = next(iter(firsts)) if len(firsts) == 1 and len(seconds) > 1 else ""
    out = {}
    for k, s in scopes.items():
        if prefix and (s == prefix or s.startswith(prefix + ".")):
            s = s[len(prefix) + 1:]
        elif prefix:
            continue
        if s:
            out[k] = s
    return out


def map_nodes(model: Any, modules: Iterable[str] | None = None) -> tuple[dict[str, str], str]:
    """node key -> module path (deepest known module when ``modules`` is given), and the source used."""
    scopes, source = raw_scopes(model)
    mapped = _strip_prefix(scopes, modules)
    if modules:
        known = set(modules)
        for k, s in list(mapped.items()):
            while s and s not in known:
                s = s.rsplit(".", 1)[0] if "." in s else ""
            if s:
                mapped[k] = s
            else:
                del mapped[k]
    return mapped, source


def attach_modules(rep: ProfileReport, model: Any, module_types: dict[str, str] | None = None,
                   torch_times: dict[str, tuple[float, float]] | None = None) -> None:
    """Fill ``rep.modules`` (inclusive ORT time per module, mapped node keys) and ``NodeTime.module``."""
    mapping, source = map_nodes(model, list(module_types) if module_types else None)
    rep.module_source = source if mapping else ""
    by_key = {n.key: n for n in rep.nodes}
    for k, m in mapping.items():
        if k in by_key:
            by_key[k].module = m
    mods: dict[str, ModuleTime] = {}
    for k, m in mapping.items():
        segs = m.split(".")
        for i in range(1, len(segs) + 1):
            path = ".".join(segs[:i])
            if module_types and path not in module_types:
                continue
            mt = mods.setdefault(path, ModuleTime(module=path, type=(module_types or {}).get(path, "")))
            mt.onnx_nodes.append(k)
            mt.onnx_mean_ms += by_key[k].mean_ms if k in by_key else 0.0
    for path, (mean, p95) in (torch_times or {}).items():
        mt = mods.setdefault(path, ModuleTime(module=path, type=(module_types or {}).get(path, "")))
        mt.torch_mean_ms, mt.torch_p95_ms = mean, p95
    total = rep.node_total_ms or 1.0
    for mt in mods.values():
        mt.share = mt.onnx_mean_ms / total
    rep.modules = sorted(mods.values(), key=lambda m: (-(m.onnx_mean_ms), m.module))


def find_hf_config(model: Path, hf_model: Path | None = None) -> Path | None:
    """The HF folder for an exported model: --hf-model, else the export folder when it holds config.json."""
    if hf_model is not None:
        return hf_model
    d = Path(model).parent
    cfg = d / "config.json"
    if cfg.is_file():
        try:
            json.loads(cfg.read_text(encoding="utf-8"))
        except ValueError:
            return None
        return d
    return None

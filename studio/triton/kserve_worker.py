"""Validate KServe manifests against the `kserve` and `kubernetes` clients' API models (JSON on stdin/stdout).

`kserve` 0.21 pins psutil<6 and cannot share the studio's venv, so this file imports nothing of the studio and runs
under the cached environment's python (``studio.triton.kserve_env``); where `kserve` is installed beside the
studio, ``studio.triton.kserve_validate`` calls ``validate_documents`` in-process instead.

Each document is rebuilt field by field into the client's model classes (``openapi_types`` / ``attribute_map``):
a key no model knows, a value of the wrong type or a model's own check (required fields, enums) is an error naming
the path; the objects are then serialised back with ``kubernetes.client.ApiClient`` and compared (round trip).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

KINDS = {("serving.kserve.io/v1beta1", "InferenceService"): "V1beta1InferenceService",
         ("serving.kserve.io/v1alpha1", "ServingRuntime"): "V1alpha1ServingRuntime",
         ("serving.kserve.io/v1alpha1", "ClusterServingRuntime"): "V1alpha1ClusterServingRuntime"}
_PRIMITIVE = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "object": (object,)}


def _classes() -> tuple[Any, Any]:
    import kserve.models
    import kubernetes.client.models

    return kserve.models, kubernetes.client.models


def _lookup(name: str) -> Any:
    for mod in _classes():
        cls = getattr(mod, name, None)
        if cls is not None:
            return cls
    return None


def _build(data: Any, typ: str, path: str, errors: list[str]) -> Any:
    """``data`` (plain JSON) as an instance of the client type named ``typ``; problems go to ``errors``."""
    if data is None:
        return None
    m = re.fullmatch(r"(?:list|List)\[(.+)\]", typ)
    if m:
        if not isinstance(data, list):
            errors.append(f"{path}: expected a list ({typ}), got {type(data).__name__}")
            return None
        return [_build(v, m.group(1), f"{path}[{i}]", errors) for i, v in enumerate(data)]
    m = re.fullmatch(r"(?:dict\(|Dict\[)([^,]+), (.+)[)\]]", typ)
    if m:
        if not isinstance(data, dict):
            errors.append(f"{path}: expected a mapping ({typ}), got {type(data).__name__}")
            return None
        return {k: _build(v, m.group(2), f"{path}.{k}", errors) for k, v in data.items()}
    if typ in _PRIMITIVE:
        ok = isinstance(data, _PRIMITIVE[typ]) and not (typ in ("int", "float") and isinstance(data, bool))
        if not ok:
            errors.append(f"{path}: expected {typ}, got {type(data).__name__} {data!r}")
        return data
    cls = _lookup(typ)
    if cls is None or not hasattr(cls, "openapi_types"):
        # quantities (ResourceQuantity, IntOrString, ...) are strings or numbers on the wire
        if not isinstance(data, (str, int, float)) or isinstance(data, bool):
            errors.append(f"{path}: expected a {typ} (text or number), got {type(data).__name__}")
        return data
    if not isinstance(data, dict):
        errors.append(f"{path}: expected a {typ} mapping, got {type(data).__name__}")
        return None
    by_key = {key: attr for attr, key in cls.attribute_map.items()}
    kwargs = {}
    for key, value in data.items():
        attr = by_key.get(key)
        if attr is None:
            errors.append(f"{path}.{key}: not a field of {typ} (fields: {', '.join(sorted(by_key))})")
            continue
        kwargs[attr] = _build(value, cls.openapi_types[attr], f"{path}.{key}", errors)
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        errors.append(f"{path}: {typ} refuses it: {exc}")
        return None


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _diff(a.get(k), b.get(k), f"{path}.{k}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b and not (a in (None, "", [], {}) and b in (None, "", [], {})):  # an empty default
        out.append(f"{path}: {a!r} came back as {b!r}")


def validate_documents(documents: list[dict[str, Any]]) -> dict[str, Any]:
    """One entry per document: its model class, errors, and whether it serialises back to the same JSON."""
    import kserve
    import kubernetes
    from kserve.api_client import ApiClient  # the generator kubernetes' models share (attribute_map keys)

    api = ApiClient()
    results = []
    for i, doc in enumerate(documents):
        kind, version = doc.get("kind"), doc.get("apiVersion")
        name = (doc.get("metadata") or {}).get("name", "")
        where = f"{kind or 'document'}[{i}]" + (f" {name}" if name else "")
        errors: list[str] = []
        cls_name = KINDS.get((version, kind))
        if cls_name is None:
            errors.append(f"{where}: apiVersion {version!r} kind {kind!r} is none of "
                          + ", ".join(f"{v} {k}" for v, k in KINDS))
            results.append({"kind": kind, "name": name, "model": "", "errors": errors, "round_trip": False})
            continue
        obj = _build(doc, cls_name, where, errors)
        if obj is not None and getattr(obj, "spec", None) is None:
            errors.append(f"{where}.spec: missing")
        round_trip: list[str] = []
        if obj is not None and not errors:
            _diff(doc, api.sanitize_for_serialization(obj), where, round_trip)
        results.append({"kind": kind, "name": name, "model": cls_name, "errors": errors + round_trip,
                        "round_trip": obj is not None and not errors and not round_trip})
    return {"documents": results,
            "versions": {"kserve": getattr(kserve, "__version__", "") or _dist_version("kserve"),
                         "kubernetes": getattr(kubernetes, "__version__", "") or _dist_version("kubernetes")}}


def _dist_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def main() -> int:
    try:
        request = json.loads(sys.stdin.read())
        if request.get("action") == "version":
            import kserve  # noqa: F401

            result: dict[str, Any] = {"versions": {"kserve": _dist_version("kserve"),
                                                   "kubernetes": _dist_version("kubernetes")}}
        else:
            result = validate_documents(request["documents"])
        print(json.dumps({"ok": True, "result": result}))
    except Exception as exc:  # the answer carries the error; the caller turns it into a StudioError
        print(json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

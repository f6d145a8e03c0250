"""KServe v2 over HTTP for the load generator: metadata, request bodies, Triton statistics.

The hot path is the keep-alive client in :mod:`studio.telemetry.http_client` (request bytes built once and
written as-is, responses parsed by httptools): a general client (httpx, urllib) spends more time in header
handling than a trivial server spends answering. ``build_request`` is re-exported here for callers that
build requests next to their bodies.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from studio.core.errors import ConnectionFailed, InputError
from studio.core.kserve_dtypes import KSERVE_TO_NP
from studio.core.reports import Report
from studio.telemetry.http_client import build_request

__all__ = ["Endpoint", "KSERVE_DTYPES", "ServerStats", "TensorSpec", "bodies_from_file", "bodies_from_metadata",
           "build_request", "fetch_stats", "http_get_json", "http_get_text", "infer_body", "input_specs",
           "model_metadata", "parse_stats", "synth_tensor"]

# the datatypes the generator can synthesise: the fixed-size ones of the studio's one table (not BYTES)
KSERVE_DTYPES = {k: v for k, v in KSERVE_TO_NP.items() if k != "BYTES"}


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int
    base_path: str = ""

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        if "://" not in url:
            url = "http://" + url
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise InputError(f"unsupported URL scheme {parts.scheme!r}", offending=url,
                             hint="the load generator speaks plain HTTP to a KServe v2 server (http://HOST:PORT)")
        if not parts.hostname:
            raise InputError("URL has no host", offending=url, hint="use http://HOST:PORT")
        return cls(parts.hostname, parts.port or 80, parts.path.rstrip("/"))

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}{self.base_path}"


def http_get_json(url: str, timeout: float = 5.0) -> Any:
    """GET a JSON document; ConnectionFailed when the server cannot be reached."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - user-given server URL
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read()[:300].decode("utf-8", "replace")
        raise ConnectionFailed(f"{url} answered HTTP {exc.code}: {body}", offending=url,
                               hint="check the model name and that it is loaded on the server") from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise ConnectionFailed(f"cannot reach {url}: {getattr(exc, 'reason', exc)}", offending=url,
                               hint="is the server running, and is the URL the HTTP (not gRPC) port?") from exc
    except json.JSONDecodeError as exc:
        raise ConnectionFailed(f"{url} did not answer JSON", offending=url) from exc


def http_get_text(url: str, timeout: float = 5.0) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310
            return resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        raise ConnectionFailed(f"{url} answered HTTP {exc.code}", offending=url) from exc
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise ConnectionFailed(f"cannot reach {url}: {getattr(exc, 'reason', exc)}", offending=url) from exc


# -- model metadata and request bodies -----------------------------------------------------------

@dataclass
class TensorSpec:
    name: str
    datatype: str
    shape: list[int]


def model_metadata(ep: Endpoint, model: str) -> dict[str, Any]:
    return http_get_json(f"{ep.url}/v2/models/{model}")


def input_specs(meta: dict[str, Any], shape_overrides: dict[str, list[int]] | None = None,
                batch: int = 1) -> list[TensorSpec]:
    """Concrete input shapes from metadata: -1 becomes ``batch`` in the first dim, 1 elsewhere (or an override)."""
    specs: list[TensorSpec] = []
    overrides = shape_overrides or {}
    for inp in meta.get("inputs", []):
        name, dtype = inp["name"], inp["datatype"]
        if dtype not in KSERVE_DTYPES:
            raise InputError(f"input {name!r} has datatype {dtype}, which the generator cannot synthesise",
                             offending=name, hint="give the data with --input-data FILE")
        if name in overrides:
            shape = list(overrides[name])
        else:
            shape = [(batch if i == 0 else 1) if int(d) < 0 else int(d) for i, d in enumerate(inp["shape"])]
        specs.append(TensorSpec(name, dtype, shape))
    if not specs:
        raise InputError("the model's metadata lists no inputs", offending=meta.get("name"),
                         hint="give the data with --input-data FILE")
    return specs


def synth_tensor(spec: TensorSpec, rng: np.random.Generator) -> np.ndarray:
    dt = KSERVE_DTYPES[spec.datatype]
    if dt is np.bool_:
        return rng.integers(0, 2, size=spec.shape).astype(bool)
    if np.issubdtype(dt, np.integer):
        return rng.integers(0, 100, size=spec.shape).astype(dt)
    return rng.standard_normal(size=spec.shape).astype(dt)


def infer_body(tensors: dict[str, tuple[str, np.ndarray]]) -> bytes:
    """KServe v2 JSON request body from name -> (datatype, array)."""
    inputs = [{"name": n, "shape": list(a.shape), "datatype": dt, "data": a.reshape(-1).tolist()}
              for n, (dt, a) in tensors.items()]
    return json.dumps({"inputs": inputs}, separators=(",", ":")).encode()


def bodies_from_metadata(meta: dict[str, Any], shape_overrides: dict[str, list[int]] | None = None,
                         seed: int = 0, count: int = 1) -> list[bytes]:
    rng = np.random.default_rng(seed)
    specs = input_specs(meta, shape_overrides)
    return [infer_body({s.name: (s.datatype, synth_tensor(s, rng)) for s in specs}) for _ in range(count)]


def bodies_from_file(path: Path, meta: dict[str, Any] | None) -> list[bytes]:
    """Request bodies from a JSON file: a KServe v2 request ({"inputs": [...]}), a list of them, or
    perf_analyzer's input-data format ({"data": [{"INPUT0": [...] | {"content": [...], "shape": [...]}}]})."""
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError as exc:
        raise InputError(f"input data file not found: {path}", offending=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"input data file is not valid JSON: {exc}", offending=str(path),
                         hint="use a KServe v2 request body or perf_analyzer's {\"data\": [...]} format") from exc
    if isinstance(doc, dict) and "inputs" in doc:
        return [json.dumps(doc, separators=(",", ":")).encode()]
    if isinstance(doc, list) and doc and all(isinstance(d, dict) and "inputs" in d for d in doc):
        return [json.dumps(d, separators=(",", ":")).encode() for d in doc]
    if isinstance(doc, dict) and isinstance(doc.get("data"), list) and doc["data"]:
        specs = {s["name"]: s for s in (meta or {}).get("inputs", [])}
        bodies = []
        for i, entry in enumerate(doc["data"]):
            tensors: dict[str, tuple[str, np.ndarray]] = {}
            for name, val in entry.items():
                if name not in specs:
                    raise InputError(f"input data entry {i} names {name!r}, which the model does not have",
                                     offending=f"{path}: data[{i}].{name}",
                                     hint=f"the model's inputs are: {', '.join(specs) or '(unknown)'}")
                dtype = specs[name]["datatype"]
                if isinstance(val, dict):
                    arr = np.asarray(val.get("content", []), dtype=KSERVE_DTYPES.get(dtype, np.float32))
                    shape = val.get("shape") or list(arr.shape)
                else:
                    arr = np.asarray(val, dtype=KSERVE_DTYPES.get(dtype, np.float32))
                    shape = [(1 if int(d) < 0 else int(d)) for d in specs[name]["shape"]]
                try:
                    arr = arr.reshape(shape)
                except ValueError as exc:
                    raise InputError(f"input {name!r} in entry {i} has {arr.size} values, shape {shape} "
                                     f"needs {int(np.prod(shape))}", offending=f"{path}: data[{i}].{name}",
                                     hint="give {\"content\": [...], \"shape\": [...]} for dynamic dims") from exc
                tensors[name] = (dtype, arr)
            bodies.append(infer_body(tensors))
        return bodies
    raise InputError("input data file has neither \"inputs\" nor \"data\"", offending=str(path),
                     hint="use a KServe v2 request body or perf_analyzer's {\"data\": [...]} format")


# -- Triton statistics (server-side queue / compute breakdown) -----------------------------------

@dataclass
class ServerStats(Report):
    """Cumulative counters of /v2/models/NAME/stats (summed over versions); subtract two for a delta."""

    schema_version: int = 1
    success_count: int = 0
    success_ns: int = 0
    fail_count: int = 0
    queue_ns: int = 0
    compute_input_ns: int = 0
    compute_infer_ns: int = 0
    compute_output_ns: int = 0
    inference_count: int = 0
    execution_count: int = 0

    def __sub__(self, other: ServerStats) -> ServerStats:
        vals = {k: getattr(self, k) - getattr(other, k) for k in self.__dataclass_fields__ if k != "schema_version"}
        return ServerStats(**vals)

    def breakdown_us(self) -> dict[str, float | None]:
        """Mean microseconds per successful request for each server-side stage."""
        n = self.success_count
        if n <= 0:
            return {"request_us": None, "queue_us": None, "compute_input_us": None, "compute_infer_us": None,
                    "compute_output_us": None}
        return {"request_us": self.success_ns / n / 1e3, "queue_us": self.queue_ns / n / 1e3,
                "compute_input_us": self.compute_input_ns / n / 1e3,
                "compute_infer_us": self.compute_infer_ns / n / 1e3,
                "compute_output_us": self.compute_output_ns / n / 1e3}


def parse_stats(doc: dict[str, Any]) -> ServerStats:
    st = ServerStats()
    for ms in doc.get("model_stats", []):
        inf = ms.get("inference_stats", {})

        def part(key: str, inf: dict[str, Any] = inf) -> tuple[int, int]:
            d = inf.get(key) or {}
            return int(d.get("count", 0)), int(d.get("ns", 0))

        c, ns = part("success")
        st.success_count += c
        st.success_ns += ns
        st.fail_count += part("fail")[0]
        st.queue_ns += part("queue")[1]
        st.compute_input_ns += part("compute_input")[1]
        st.compute_infer_ns += part("compute_infer")[1]
        st.compute_output_ns += part("compute_output")[1]
        st.inference_count += int(ms.get("inference_count", 0))
        st.execution_count += int(ms.get("execution_count", 0))
    return st


def fetch_stats(ep: Endpoint, model: str, timeout: float = 5.0) -> ServerStats | None:
    """Server statistics, or None when the server does not offer the endpoint (not every KServe server does)."""
    try:
        return parse_stats(http_get_json(f"{ep.url}/v2/models/{model}/stats", timeout=timeout))
    except ConnectionFailed:
        return None

"""Every endpoint the agent serves, listed once: KServe v2 (HTTP and its gRPC twin), Triton's extensions, management.

Why one table: the HTTP app registers its routes from it (:func:`studio.agent.server.create_app`), the ASGI fast
path dispatches inference and generation with :func:`match`, the gRPC interceptor takes the RPCs open without a
token from it, and ``GET /v2`` lists the extensions it declares. A new endpoint is one row here plus its handler;
``tests/edge/test_agent_endpoints.py`` fails when a row has no handler or a handler no row.

``auth``: ``"none"`` (health, metrics), ``"infer"`` (needs the inference token when the agent has one,
``--infer-token-file``), ``"agent"`` (always needs the agent's token). ``fast``: served by the ASGI fast path
in front of FastAPI (latency: see :class:`studio.agent.server.InferFastPath`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Auth = Literal["none", "infer", "agent"]
_MODEL = "/v2/models/{name}"
_VERSIONED = "/v2/models/{name}/versions/{version}"


@dataclass(frozen=True)
class Endpoint:
    """One endpoint: its name (the handler's key), HTTP method and path templates, gRPC twin, auth, extensions."""

    name: str
    method: str
    paths: tuple[str, ...]
    auth: Auth
    grpc: str | None = None  # the GRPCInferenceService RPC serving the same thing
    extensions: tuple[str, ...] = ()  # Triton protocol extensions this endpoint implements
    fast: bool = False

    @property
    def patterns(self) -> tuple[re.Pattern[str], ...]:
        return _compiled(self)


def _model_paths(suffix: str = "") -> tuple[str, str]:
    return _MODEL + suffix, _VERSIONED + suffix


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("server_live", "GET", ("/v2/health/live",), "none", grpc="ServerLive"),
    Endpoint("server_ready", "GET", ("/v2/health/ready",), "none", grpc="ServerReady"),
    Endpoint("server_metadata", "GET", ("/v2",), "infer", grpc="ServerMetadata"),
    # before model_metadata: "/v2/models/stats" would otherwise read as a model named "stats"
    Endpoint("model_statistics", "GET", ("/v2/models/stats", *_model_paths("/stats")), "infer",
             grpc="ModelStatistics", extensions=("statistics",)),
    Endpoint("model_metadata", "GET", _model_paths(), "infer", grpc="ModelMetadata"),
    Endpoint("model_ready", "GET", _model_paths("/ready"), "infer", grpc="ModelReady"),
    Endpoint("model_config", "GET", _model_paths("/config"), "infer"),
    Endpoint("repository_index", "POST", ("/v2/repository/index",), "infer", grpc="RepositoryIndex",
             extensions=("model_repository",)),
    Endpoint("model_infer", "POST", _model_paths("/infer"), "infer", grpc="ModelInfer",
             extensions=("binary_tensor_data",), fast=True),
    Endpoint("generate", "POST", _model_paths("/generate"), "infer", extensions=("generate",), fast=True),
    Endpoint("generate_stream", "POST", _model_paths("/generate_stream"), "infer", extensions=("generate",),
             fast=True),
    Endpoint("metrics", "GET", ("/metrics",), "none"),
    Endpoint("agent_status", "GET", ("/agent/status",), "agent"),
    Endpoint("bundle_upload", "POST", ("/agent/bundles",), "agent"),
    Endpoint("trust_list", "GET", ("/agent/trust",), "agent"),
    Endpoint("trust_push", "POST", ("/agent/trust",), "agent"),
    Endpoint("model_rollback", "POST", ("/agent/models/{name}/rollback",), "agent"),
)

_CACHE: dict[str, tuple[re.Pattern[str], ...]] = {}


def _compiled(ep: Endpoint) -> tuple[re.Pattern[str], ...]:
    pats = _CACHE.get(ep.name)
    if pats is None:
        pats = tuple(re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(p)) + "$")
                     for p in ep.paths)
        _CACHE[ep.name] = pats
    return pats


def extensions() -> list[str]:
    """The Triton protocol extensions the agent declares on ``GET /v2``: those its endpoints implement."""
    return list(dict.fromkeys(x for ep in ENDPOINTS for x in ep.extensions))


def match(path: str, endpoints: tuple[Endpoint, ...] = ENDPOINTS) -> tuple[Endpoint, dict[str, str]] | None:
    """The first endpoint whose path template matches ``path`` (any method: the caller answers 405) and its
    parameters (``name``, ``version``), or None."""
    for ep in endpoints:
        for pat in ep.patterns:
            hit = pat.match(path)
            if hit is not None:
                return ep, hit.groupdict()
    return None


FAST: tuple[Endpoint, ...] = tuple(ep for ep in ENDPOINTS if ep.fast)
OPEN: tuple[Endpoint, ...] = tuple(ep for ep in ENDPOINTS if ep.auth == "none")
ROUTED: tuple[Endpoint, ...] = tuple(ep for ep in ENDPOINTS if not ep.fast)
OPEN_RPCS: tuple[str, ...] = tuple(f"/{ep.grpc}" for ep in ENDPOINTS if ep.grpc and ep.auth == "none")


def needs_infer_token(path: str) -> bool:
    """Whether ``path`` needs the inference token when the agent has one: every ``/v2`` path but the open ones
    (an unknown ``/v2`` path too, so a client without the token learns nothing about what is served)."""
    if not path.startswith("/v2"):
        return False
    return match(path, OPEN) is None  # per request: the open rows are filtered once, at import

"""The agent's HTTP face: KServe v2 inference (JSON + binary tensors), bundle upload, rollback, metrics.

Management routes (``/agent/...``) need ``Authorization: Bearer TOKEN``; inference, health and metrics do
not (bind to loopback or put TLS and a firewall in front). Uploads are streamed to ``DATA/incoming`` with a
size cap and verified before anything is installed; see :mod:`studio.agent.core`.
"""

from __future__ import annotations

import asyncio
import gzip
import hmac
import json
import os
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from studio import __version__
from studio.agent.core import AgentCore, Conflict
from studio.agent.kserve import HEADER_LENGTH, ProtocolError, decode_request, encode_response
from studio.agent.metrics import AgentMetrics
from studio.core.errors import BundleError, InputError, ModelError, StudioError

_STATUS = {InputError: 400, Conflict: 409, BundleError: 422, ModelError: 422}


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **{k: v for k, v in extra.items() if v is not None}}, status_code=status)


def _studio_error(exc: StudioError) -> JSONResponse:
    status = next((s for cls, s in _STATUS.items() if isinstance(exc, cls)), 500)
    return _error(status, exc.message, kind=exc.kind, offending=exc.offending, hint=exc.hint,
                  details=exc.details or None)


def _triton_type(dt: str) -> str:
    return "TYPE_STRING" if dt == "BYTES" else f"TYPE_{dt}"


def create_app(core: AgentCore, metrics: AgentMetrics | None = None, workers: int = 4) -> FastAPI:
    app = FastAPI(title="studio-agent", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    metrics = metrics or AgentMetrics(core)
    app.state.core, app.state.metrics = core, metrics
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="infer")
    token = core.config.token.encode()

    def authorized(request: Request) -> bool:
        auth = request.headers.get("authorization", "")
        given = auth[7:].strip() if auth.lower().startswith("bearer ") else request.headers.get("x-studio-token", "")
        return bool(token) and hmac.compare_digest(given.encode(), token)

    def unauthorized() -> JSONResponse:
        metrics.deploys.labels("unauthorized").inc()
        return _error(401, "missing or wrong agent token", kind="auth",
                      hint="pass the agent's token with --token-file (Authorization: Bearer ...)")

    # -- health and metadata ---------------------------------------------------------------------------
    @app.get("/v2/health/live")
    async def live() -> Response:
        return Response(status_code=200)

    @app.get("/v2/health/ready")
    async def ready() -> Response:
        return Response(status_code=200)

    @app.get("/v2")
    async def server_metadata() -> JSONResponse:
        return JSONResponse({"name": "studio-agent", "version": __version__,
                             "extensions": ["binary_tensor_data", "model_repository", "statistics"]})

    def _model_or_404(name: str, version: str | None) -> Any:
        m = core.served.get(name)
        if m is None or (version not in (None, "") and version != m.version):
            return None
        return m

    @app.get("/v2/models/{name}")
    @app.get("/v2/models/{name}/versions/{version}")
    async def model_metadata(name: str, version: str | None = None) -> JSONResponse:
        m = _model_or_404(name, version)
        if m is None:
            return _error(404, f"Request for unknown model: '{name}' is not found")
        return JSONResponse(m.metadata())

    @app.get("/v2/models/{name}/ready")
    @app.get("/v2/models/{name}/versions/{version}/ready")
    async def model_ready(name: str, version: str | None = None) -> Response:
        return Response(status_code=200 if _model_or_404(name, version) else 400)

    @app.get("/v2/models/{name}/config")
    @app.get("/v2/models/{name}/versions/{version}/config")
    async def model_config(name: str, version: str | None = None) -> JSONResponse:
        m = _model_or_404(name, version)
        if m is None:
            return _error(404, f"Request for unknown model: '{name}' is not found")
        return JSONResponse({"name": m.name, "platform": "onnxruntime_onnx", "backend": "onnxruntime",
                             "max_batch_size": 0,
                             "input": [{"name": t.name, "data_type": _triton_type(t.datatype), "dims": t.shape}
                                       for t in m.inputs],
                             "output": [{"name": t.name, "data_type": _triton_type(t.datatype), "dims": t.shape}
                                        for t in m.outputs],
                             "parameters": {"execution_providers": {"string_value": ",".join(m.providers)}}})

    @app.post("/v2/repository/index")
    async def repository_index() -> JSONResponse:
        return JSONResponse([{"name": n, "version": m.version, "state": "READY"}
                             for n, m in sorted(core.served.items())])

    # -- inference -------------------------------------------------------------------------------------
    @app.post("/v2/models/{name}/infer")
    @app.post("/v2/models/{name}/versions/{version}/infer")
    async def infer(request: Request, name: str, version: str | None = None) -> Response:
        m = _model_or_404(name, version)
        if m is None:
            metrics.errors.labels(name, "unknown_model").inc()
            return _error(404, f"Request for unknown model: '{name}' is not found")
        t0 = time.perf_counter()
        metrics.inflight.inc()
        try:
            body = await request.body()
            enc = request.headers.get("content-encoding")
            if enc == "gzip":
                body = gzip.decompress(body)
            elif enc == "deflate":
                body = zlib.decompress(body)
            hl = request.headers.get(HEADER_LENGTH)
            req = decode_request(body, int(hl) if hl else None)
            m.check_inputs(req.inputs)
            wanted = [n for n, _ in req.outputs] if req.outputs is not None else None
            if wanted is not None:
                unknown = [n for n in wanted if n not in m.output_names]
                if unknown:
                    raise ProtocolError(f"unexpected inference output '{unknown[0]}' for model '{name}'")
            if m.run_inline:
                results = m.infer(req.inputs, wanted)
            else:
                results = await asyncio.get_running_loop().run_in_executor(executor, m.infer, req.inputs, wanted)
            out, hlen = encode_response(name, m.version, results, req)
        except (ProtocolError, ValueError) as exc:
            metrics.errors.labels(name, "bad_request").inc()
            metrics.requests.labels(name, "error").inc()
            return _error(400, str(exc))
        except Exception as exc:  # ORT failure on this input
            metrics.errors.labels(name, "inference").inc()
            metrics.requests.labels(name, "error").inc()
            return _error(500, f"inference failed: {exc}")
        finally:
            metrics.inflight.dec()
        metrics.latency.labels(name).observe(time.perf_counter() - t0)
        metrics.requests.labels(name, "ok").inc()
        headers = {}
        if hlen is not None:
            headers["Inference-Header-Content-Length"] = str(hlen)
        accept = request.headers.get("accept-encoding", "")
        if "gzip" in accept:
            out, headers["Content-Encoding"] = gzip.compress(out), "gzip"
        elif "deflate" in accept:
            out, headers["Content-Encoding"] = zlib.compress(out), "deflate"
        return Response(out, headers=headers,
                        media_type="application/octet-stream" if hlen is not None else "application/json")

    # -- metrics ---------------------------------------------------------------------------------------
    @app.get("/metrics")
    async def prom() -> Response:
        data = await run_in_threadpool(metrics.render)
        return Response(data, media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- management ------------------------------------------------------------------------------------
    @app.get("/agent/status")
    async def status(request: Request) -> JSONResponse:
        if not authorized(request):
            return unauthorized()
        st = await run_in_threadpool(core.status)
        st["sensors"] = await run_in_threadpool(metrics.sensors.summary)
        return JSONResponse(st)

    @app.post("/agent/bundles")
    async def upload(request: Request) -> JSONResponse:
        if not authorized(request):
            return unauthorized()
        cap = core.config.max_upload_bytes
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            metrics.deploys.labels("too_large").inc()
            return _error(413, f"bundle of {int(declared)} bytes exceeds this agent's upload limit of {cap} bytes",
                          kind="bundle", hint="start the agent with a larger --max-upload-mb")
        part = core.store.new_upload_path()
        size, complete = 0, False
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > cap:
                        metrics.deploys.labels("too_large").inc()
                        return _error(413, f"bundle exceeds this agent's upload limit of {cap} bytes",
                                      kind="bundle", hint="start the agent with a larger --max-upload-mb")
                    f.write(chunk)
            complete = True
        except ClientDisconnect:
            metrics.deploys.labels("interrupted").inc()
            return _error(400, "upload interrupted")
        finally:
            if not complete:  # oversize, client gone, or cancelled: leave nothing behind
                part.unlink(missing_ok=True)
        try:
            result = await run_in_threadpool(core.install_upload, part)
        except StudioError as exc:
            metrics.deploys.labels("rejected").inc()
            return _studio_error(exc)
        finally:
            part.unlink(missing_ok=True)
        metrics.deploys.labels("activated").inc()
        return JSONResponse(result)

    @app.post("/agent/models/{name}/rollback")
    async def rollback(request: Request, name: str) -> JSONResponse:
        if not authorized(request):
            return unauthorized()
        version = None
        raw = await request.body()
        if raw:
            try:
                version = (json.loads(raw) or {}).get("version")
            except (ValueError, AttributeError):
                return _error(400, "rollback body must be JSON like {\"version\": \"1\"}")
        try:
            return JSONResponse(await run_in_threadpool(core.rollback, name, version))
        except StudioError as exc:
            return _studio_error(exc)

    return app

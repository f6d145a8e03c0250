"""The agent's HTTP face: KServe v2 inference (JSON + binary tensors), bundle upload, rollback, metrics.

Management routes (``/agent/...``) need ``Authorization: Bearer TOKEN``; inference and model metadata do too
when the agent has an inference token (``--infer-token-file``), else not; health and metrics never do (bind to
loopback, or use TLS with client certificates, ``--tls-client-ca``, on a board's network). Uploads are streamed to ``DATA/incoming`` with a
size cap and verified before anything is installed; see :mod:`studio.agent.core`.
"""

from __future__ import annotations

import asyncio
import gzip
import hmac
import json
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from studio import __version__
from studio.agent.core import AgentCore, unknown_model
from studio.agent.endpoints import FAST, ROUTED, Endpoint, extensions, match, needs_infer_token
from studio.agent.generate_routes import GenerateRoutes
from studio.agent.kserve import ProtocolError, decode_request, dumps, encode_response
from studio.agent.limits import InflightGate, LimitExceeded, Limits, decompress, read_body
from studio.agent.metrics import AgentMetrics
from studio.agent.pipeline import STAGES, StagedPipeline
from studio.agent.responses import error_response, studio_error_response
from studio.agent.statistics import StatisticsError, timed_infer
from studio.agent.upload import receive_upload
from studio.core.errors import StudioError

UNKNOWN_MODEL = "unknown"  # the one metrics label for requests to models the agent does not serve
_error, _studio_error = error_response, studio_error_response


def _triton_type(dt: str) -> str:
    return "TYPE_STRING" if dt == "BYTES" else f"TYPE_{dt}"


def create_app(core: AgentCore, metrics: AgentMetrics | None = None, workers: int = 4, *, otel: Any = None,
               pre_workers: int = 2, pipeline_depth: int = 8, limits: Limits | None = None,
               infer_token: str | None = None) -> InferFastPath:
    """The agent's ASGI app: the inference fast path in front of the FastAPI app that serves the rest.

    ``otel``: a :class:`studio.telemetry.otel.Otel` (traces + metrics over OTLP) or None (nothing exported).
    ``pre_workers`` / ``pipeline_depth``: preprocessing threads and queue bound of the staged pipeline that
    serves raw inputs (see :mod:`studio.agent.pipeline`)."""
    app = FastAPI(title="studio-agent", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    metrics = metrics or AgentMetrics(core)
    app.state.core, app.state.metrics = core, metrics
    executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="infer")
    token = core.config.token.encode()

    def require_agent_token(request: Request) -> None:
        """The dependency of every ``auth="agent"`` endpoint (:mod:`studio.agent.endpoints`)."""
        auth = request.headers.get("authorization", "")
        given = auth[7:].strip() if auth.lower().startswith("bearer ") else request.headers.get("x-studio-token", "")
        if not (token and hmac.compare_digest(given.encode(), token)):
            raise _Unauthorized

    async def unauthorized(request: Request, exc: Exception) -> JSONResponse:
        metrics.deploys.labels("unauthorized").inc()
        return _error(401, "missing or wrong agent token", kind="auth",
                      hint="pass the agent's token with --token-file (Authorization: Bearer ...)")

    app.add_exception_handler(_Unauthorized, unauthorized)

    # -- health and metadata ---------------------------------------------------------------------------
    async def live() -> Response:
        return Response(status_code=200)

    async def ready() -> Response:
        return Response(status_code=200)

    async def server_metadata() -> JSONResponse:
        return JSONResponse({"name": "studio-agent", "version": __version__, "extensions": extensions()})

    # Triton's statistics extension (studio.agent.statistics); before /v2/models/{name}, which would take "stats"
    async def model_stats(name: str = "", version: str = "") -> JSONResponse:
        try:
            return JSONResponse(core.statistics.report(core.served, name, version))
        except StatisticsError as exc:  # Triton answers INVALID_ARG: 400 {"error": ...}
            return _error(400, str(exc))

    async def model_metadata(name: str, version: str | None = None) -> JSONResponse:
        m = core.find(name, version)
        if m is None:
            return _error(404, unknown_model(name))
        return JSONResponse(m.metadata())

    async def model_ready(name: str, version: str | None = None) -> Response:
        return Response(status_code=200 if core.find(name, version) else 400)

    async def model_config(name: str, version: str | None = None) -> JSONResponse:
        m = core.find(name, version)
        if m is None:
            return _error(404, unknown_model(name))
        platform = m.metadata().get("platform", "onnxruntime_onnx")  # tvm_relax for compiled bundles
        return JSONResponse({"name": m.name, "platform": platform,
                             "backend": "onnxruntime" if platform == "onnxruntime_onnx" else "tvm",
                             "max_batch_size": 0,
                             "input": [{"name": t.name, "data_type": _triton_type(t.datatype), "dims": t.shape}
                                       for t in m.inputs],
                             "output": [{"name": t.name, "data_type": _triton_type(t.datatype), "dims": t.shape}
                                        for t in m.outputs],
                             "parameters": {"execution_providers": {"string_value": ",".join(m.providers)}}})

    async def repository_index() -> JSONResponse:
        return JSONResponse([{"name": n, "version": m.version, "state": "READY"}
                             for n, m in sorted(core.served.items())])

    # -- metrics ---------------------------------------------------------------------------------------
    async def prom() -> Response:
        fast.update_queue_gauges()
        data = await run_in_threadpool(metrics.render)
        return Response(data, media_type="text/plain; version=0.0.4; charset=utf-8")

    # -- management ------------------------------------------------------------------------------------
    async def status(request: Request) -> JSONResponse:
        st = await run_in_threadpool(core.status)
        st["sensors"] = await run_in_threadpool(metrics.sensors.summary)
        return JSONResponse(st)

    async def upload(request: Request) -> JSONResponse:
        return await receive_upload(request, core, metrics)

    async def trust_list(request: Request) -> JSONResponse:
        return JSONResponse({"trusted_keys": core.config.trusted.ids(), "pushed_keys": core.trust.pushed_ids(),
                             "trust_push": core.trust.allow_push})

    async def trust_push(request: Request) -> JSONResponse:
        raw = await request.body()
        if len(raw) > 4096:
            return _error(413, "a public key line is under 100 bytes; this body is too large", kind="input")
        try:
            key = (json.loads(raw) or {}).get("key") if raw else None
        except (ValueError, AttributeError):
            key = None
        if not isinstance(key, str):
            return _error(400, 'trust body must be JSON like {"key": "ed25519 <base64> NAME"}', kind="input",
                          hint="send the line `studio keys export-public NAME` prints")
        try:
            pushed = await run_in_threadpool(core.push_trust, key)
        except StudioError as exc:
            return _studio_error(exc)
        return JSONResponse({**pushed.to_dict(), "trusted_keys": core.config.trusted.ids()})

    async def rollback(request: Request, name: str) -> JSONResponse:
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

    handlers = {"server_live": live, "server_ready": ready, "server_metadata": server_metadata,
                "model_statistics": model_stats, "model_metadata": model_metadata, "model_ready": model_ready,
                "model_config": model_config, "repository_index": repository_index, "metrics": prom,
                "agent_status": status, "bundle_upload": upload, "trust_list": trust_list,
                "trust_push": trust_push, "model_rollback": rollback}
    _register(app, handlers, Depends(require_agent_token))
    fast = InferFastPath(app, core, metrics, executor, otel=otel, pre_workers=pre_workers,
                         pipeline_depth=pipeline_depth, limits=limits,
                         infer_token=infer_token.encode() if infer_token else None)
    fast.generate = GenerateRoutes(core, metrics, fast.limits)  # Triton's generate extension
    return fast


class _Unauthorized(Exception):
    """A management request without the agent's token (answered 401 by ``create_app``'s handler)."""


def _register(app: FastAPI, handlers: dict[str, Any], agent_auth: Any) -> None:
    """Route every endpoint FastAPI serves (:data:`studio.agent.endpoints.ROUTED`, in the table's order) to its
    handler; a row without a handler, or a handler without a row, is a programming error caught at start."""
    missing = [ep.name for ep in ROUTED if ep.name not in handlers]
    extra = sorted(set(handlers) - {ep.name for ep in ROUTED})
    if missing or extra:
        raise RuntimeError(f"agent endpoints without handlers: {missing}; handlers without endpoints: {extra}")
    for ep in ROUTED:
        deps = [agent_auth] if ep.auth == "agent" else None
        for path in ep.paths:
            app.add_api_route(path, handlers[ep.name], methods=[ep.method], dependencies=deps)


_JSON_CT = (b"content-type", b"application/json")
_BIN_CT = (b"content-type", b"application/octet-stream")


class InferFastPath:
    """ASGI app: ``POST /v2/models/{name}[/versions/{v}]/infer`` handled directly, everything else by FastAPI.

    Why: at concurrency 1 on a small edge model, FastAPI's routing, request object and response classes cost
    more than the model run (about 0.5 ms of 0.6). This handler reads the ASGI messages itself, parses the
    header with orjson and the binary tensors with ``numpy.frombuffer``, and answers with two ASGI sends;
    KServe behaviour (JSON and binary, ``Inference-Header-Content-Length``, output selection, gzip/deflate,
    ``{"error": ...}`` with 400/404/500) and the metrics are the same as the routed version had.
    """

    def __init__(self, app: FastAPI, core: AgentCore, metrics: AgentMetrics, executor: ThreadPoolExecutor, *,
                 otel: Any = None, pre_workers: int = 2, pipeline_depth: int = 8, limits: Limits | None = None,
                 infer_token: bytes | None = None) -> None:
        self.app, self.core, self.metrics, self.executor = app, core, metrics, executor
        self.limits = limits or Limits()
        self.gate = InflightGate(self.limits)
        self.infer_token = infer_token  # bytes: inference and model metadata need "Authorization: Bearer" it
        self.state = app.state
        self._children: dict[str, tuple[Any, Any, Any, Any]] = {}
        self.otel = otel
        self.pre_workers, self.pipeline_depth = pre_workers, pipeline_depth
        self._pipelines: dict[int, tuple[Any, StagedPipeline]] = {}  # id(ServedModel) -> (model, pipeline)
        self._pipelines_lock = threading.Lock()
        self.generate: GenerateRoutes | None = None  # /generate and /generate_stream (set by create_app)

    def _infer_authorized(self, scope: dict) -> bool:
        for k, v in scope["headers"]:
            if k == b"authorization":
                return v[:7].lower() == b"bearer " and hmac.compare_digest(v[7:].strip(), self.infer_token or b"")
        return False

    def pipeline(self, m: Any) -> StagedPipeline:
        """The staged pipeline of served model ``m`` (made on its first raw request); pipelines of versions
        no longer served are closed once their queued requests are done."""
        entry = self._pipelines.get(id(m))
        if entry is not None and entry[0] is m:
            return entry[1]
        with self._pipelines_lock:
            served = {id(x) for x in self.core.served.values()}
            for key, (_old, pl) in list(self._pipelines.items()):
                if key not in served:
                    del self._pipelines[key]
                    threading.Thread(target=pl.close, daemon=True, name="pipeline-close").start()
            pl = StagedPipeline(m, pre_workers=self.pre_workers, depth=self.pipeline_depth,
                                observer=self._observe_stage)
            self._pipelines[id(m)] = (m, pl)
            return pl

    def _observe_stage(self, model: str, stage: str, queue_s: float, service_s: float) -> None:
        self.metrics.observe_stage(model, stage, queue_s, service_s)
        if self.otel is not None:
            h = self.otel.histogram("studio.agent.stage.duration", "s", "staged pipeline time per stage")
            h.record(queue_s, {"model": model, "stage": stage, "phase": "queue"})
            h.record(service_s, {"model": model, "stage": stage, "phase": "service"})

    def update_queue_gauges(self) -> None:
        for m, pl in list(self._pipelines.values()):
            for stage, n in pl.queue_depths().items():
                self.metrics.stage_queue.labels(m.name, stage).set(n)

    def _model_metrics(self, name: str) -> tuple[Any, Any, Any, Any]:
        """Labelled children cached per model name: ``labels()`` takes a lock and builds a tuple each call."""
        c = self._children.get(name)
        if c is None:
            m = self.metrics
            c = (m.latency.labels(name), m.requests.labels(name, "ok"), m.requests.labels(name, "error"),
                 m.errors.labels(name, "bad_request"))
            if len(self._children) < 1024:  # names come from clients: keep the cache bounded
                self._children[name] = c
        return c

    def _trace(self, name: str, version: str, t0: float, traceparent: bytes | None,
               stages: dict[str, tuple[float, float]] | None, status: int, error: str | None) -> None:
        """One server span per request (child of the client's ``traceparent``) with a span per stage."""
        otel, t1 = self.otel, time.perf_counter()
        attrs = {"model": name, "model.version": version, "http.response.status_code": status}
        otel.record_span(f"infer {name}", t0, t1, parent=otel.extract(traceparent), kind="server",
                         attributes=attrs, stages=stages, error=error)
        otel.histogram("studio.agent.request.duration", "s", "inference request latency (server side)").record(
            t1 - t0, {"model": name, "outcome": "ok" if error is None else "error"})

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if self.infer_token and needs_infer_token(path) and not self._infer_authorized(scope):
                self.metrics.errors.labels(UNKNOWN_MODEL, "unauthorized").inc()
                return await self._send(send, 401, dumps({
                    "error": "missing or wrong inference token (this agent requires Authorization: Bearer TOKEN)",
                    "kind": "auth"}), [_JSON_CT, (b"www-authenticate", b"Bearer")])
            hit = match(path, FAST) if path.startswith("/v2/models/") else None
            if hit is not None:
                ep, params = hit
                if scope["method"] != ep.method:
                    return await self._send(send, 405, dumps({"error": f"{ep.name} takes {ep.method}"}),
                                            [_JSON_CT, (b"allow", ep.method.encode())])
                return await self._dispatch(ep, params, scope, receive, send)
        await self.app(scope, receive, send)

    async def _dispatch(self, ep: Endpoint, params: dict[str, str], scope: dict, receive: Any, send: Any) -> None:
        name, version = params["name"], params.get("version")
        if ep.name == "model_infer":
            return await self._infer(scope, receive, send, name, version)
        if self.generate is not None:
            return await self.generate(scope, receive, send, name, version, ep.name == "generate_stream")
        await self._error(send, 404, f"{ep.name} is not served by this agent")

    @staticmethod
    async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _error(self, send: Any, status: int, message: str) -> None:
        await self._send(send, status, dumps({"error": message}), [_JSON_CT])

    async def _limit(self, send: Any, receive: Any, exc: LimitExceeded, label: str, body_read: bool = False) -> None:
        """Answer a request over a limit (its status and JSON error); a body left unread closes the connection
        (``body_read``: it was read whole, nothing to drain)."""
        self.metrics.errors.labels(label, exc.reason).inc()
        headers = [_JSON_CT, *exc.headers]
        if exc.drain and not body_read:
            try:
                await read_body(receive, self.limits, None)
            except LimitExceeded:
                exc.drain = False
        if not exc.drain:
            headers.append((b"connection", b"close"))
        await self._send(send, exc.status, dumps({"error": exc.message, "kind": "limit", "limit": exc.reason}),
                         headers)

    async def _infer(self, scope: dict, receive: Any, send: Any, name: str, version: str | None) -> None:
        metrics = self.metrics
        m = self.core.served.get(name)
        if m is None or (version is not None and version != m.version):
            # one "unknown" label for every name a client makes up: names never grow the metrics
            metrics.errors.labels(UNKNOWN_MODEL, "unknown_model").inc()
            try:  # drain the body (bounded) so the connection stays usable for keep-alive
                if await read_body(receive, self.limits, None) is None:
                    return
            except LimitExceeded as exc:
                return await self._limit(send, receive, exc, UNKNOWN_MODEL)
            return await self._error(send, 404, unknown_model(name))
        try:
            self.gate.enter(name)
        except LimitExceeded as exc:
            return await self._limit(send, receive, exc, name)
        try:
            await self._infer_model(scope, receive, send, name, m)
        finally:
            self.gate.leave(name)

    async def _infer_model(self, scope: dict, receive: Any, send: Any, name: str, m: Any) -> None:
        metrics = self.metrics
        lat, ok, failed, bad = self._model_metrics(name)
        stats = self.core.statistics.of(name, m.version)
        t0 = time.perf_counter()
        metrics.inflight.inc()
        otel = self.otel
        stages: dict[str, tuple[float, float]] | None = None
        enc = hl = accept = traceparent = length = None
        for k, v in scope["headers"]:
            if k == b"inference-header-content-length":
                hl = v
            elif k == b"content-encoding":
                enc = v.strip().lower()
            elif k == b"accept-encoding":
                accept = v
            elif k == b"traceparent":
                traceparent = v
            elif k == b"content-length":
                length = v
        try:
            read = False
            try:
                body = await read_body(receive, self.limits, length)
                if body is None:  # the client went away
                    return
                read = True
                body = decompress(body, enc, self.limits)
            except LimitExceeded as exc:
                failed.inc()
                stats.record_failure(time.perf_counter() - t0)
                return await self._limit(send, receive, exc, name, body_read=read)
            req = decode_request(body, int(hl) if hl and hl.isdigit() else None)
            wanted = [n for n, _ in req.outputs] if req.outputs is not None else None
            if wanted is not None:
                for n in wanted:
                    if not m.has_output(n):
                        raise ProtocolError(f"unexpected inference output '{n}' for model '{name}'")
            if m.raw_inputs and not m.raw_inputs.keys().isdisjoint(req.inputs):  # raw inputs: staged pipeline
                t_in = time.perf_counter()
                job = await self.pipeline(m).submit(req, wanted)
                out, hlen = job.body, job.header_length
                t_end = time.perf_counter()
                pre, run, post = (job.t[s] for s in STAGES)  # [enqueued, started, finished] per stage
                c_in, c_inf, c_out = t_in - t0 + pre[2] - pre[1], run[2] - run[1], post[2] - post[1]
                queue = t_end - t0 - c_in - c_inf - c_out  # admission and every stage's queue
                if otel is not None:
                    stages = {s: (v[1], v[2]) for s, v in job.t.items()}
            else:
                m.check_inputs(req.inputs)
                t_in = time.perf_counter()
                if m.run_inline:
                    t_r0 = t_in
                    results = m.infer(req.inputs, wanted)
                    t_r1 = time.perf_counter()
                else:
                    results, t_r0, t_r1 = await asyncio.get_running_loop().run_in_executor(
                        self.executor, timed_infer, m, req.inputs, wanted)
                out, hlen = encode_response(name, m.version, results, req)
                t_end = time.perf_counter()
                c_in, queue, c_inf, c_out = t_in - t0, t_r0 - t_in, t_r1 - t_r0, t_end - t_r1
                if otel is not None:
                    stages = {"preprocess": (t0, t_in), "infer": (t_r0, t_r1), "postprocess": (t_r1, t_end)}
        except (ProtocolError, ValueError, OSError, EOFError, zlib.error) as exc:
            bad.inc()
            failed.inc()
            stats.record_failure(time.perf_counter() - t0)
            if otel is not None:
                self._trace(name, m.version, t0, traceparent, stages, 400, str(exc))
            return await self._error(send, 400, str(exc))
        except Exception as exc:  # ORT failure on this input
            metrics.errors.labels(name, "inference").inc()
            failed.inc()
            stats.record_failure(time.perf_counter() - t0)
            if otel is not None:
                self._trace(name, m.version, t0, traceparent, stages, 500, str(exc))
            return await self._error(send, 500, f"inference failed: {exc}")
        finally:
            metrics.inflight.dec()
        lat.observe(t_end - t0)  # the same interval as the statistics' success ns
        ok.inc()
        stats.record_success(t_end - t0, queue, c_in, c_inf, c_out)
        if otel is not None:
            self._trace(name, m.version, t0, traceparent, stages, 200, None)
        headers = [_BIN_CT if hlen is not None else _JSON_CT]
        if hlen is not None:
            headers.append((b"inference-header-content-length", str(hlen).encode()))
        if accept:
            if b"gzip" in accept:
                out = gzip.compress(out)
                headers.append((b"content-encoding", b"gzip"))
            elif b"deflate" in accept:
                out = zlib.compress(out)
                headers.append((b"content-encoding", b"deflate"))
        await self._send(send, 200, out, headers)

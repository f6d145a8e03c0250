"""The agent's KServe v2 gRPC face (Triton's ``GRPCInferenceService``), so ``tritonclient.grpc`` works unchanged.

It serves inference only (health, server/model metadata, readiness, ModelInfer, ModelStatistics); bundle upload
and rollback stay on HTTP behind the token. It shares the HTTP side's model registry (``core.served``, read per request, so a hot
update or rollback is seen at once), its metrics and its bounded inference executor: gRPC handler threads hand
every model run to that executor, so the two protocols together never run more than ``--workers`` inferences.
The protobuf classes come from ``tritonclient.grpc`` (the same ones the client uses), so nothing is generated.
"""

from __future__ import annotations

import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from tritonclient.grpc import service_pb2 as pb
from tritonclient.grpc import service_pb2_grpc as pb_grpc

from studio import __version__
from studio.agent.core import AgentCore, unknown_model
from studio.agent.endpoints import OPEN_RPCS
from studio.agent.kserve import ProtocolError, _deserialize_bytes, _serialize_bytes, datatype_of
from studio.agent.metrics import AgentMetrics
from studio.agent.statistics import StatisticsError, timed_infer
from studio.core.kserve_dtypes import GRPC_CONTENTS_FIELD as _CONTENTS_FIELD  # typed contents per datatype
from studio.core.kserve_dtypes import KSERVE_TO_NP

log = logging.getLogger("studio.agent.grpc")


class _Abort(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def decode_infer_request(req: Any) -> dict[str, np.ndarray]:
    """Input tensors of a ``ModelInferRequest``: ``raw_input_contents`` (one per input, in order) or typed
    ``contents``; raises :class:`ProtocolError` naming the input on anything inconsistent."""
    raw = req.raw_input_contents
    if raw and len(raw) != len(req.inputs):
        raise ProtocolError(f"{len(raw)} raw_input_contents for {len(req.inputs)} inputs: when raw contents are "
                            "used, every input must have one, in input order")
    feed: dict[str, np.ndarray] = {}
    for i, t in enumerate(req.inputs):
        name, dt, shape = t.name, t.datatype, [int(d) for d in t.shape]
        if dt not in KSERVE_TO_NP:
            raise ProtocolError(f"input '{name}': unsupported datatype {dt}")
        if any(d < 0 for d in shape):
            raise ProtocolError(f"input '{name}': negative dimension in shape {shape}")
        if name in feed:
            raise ProtocolError(f"input '{name}' appears twice")
        count = math.prod(shape)
        if raw:
            if dt == "BYTES":
                arr = np.array(_deserialize_bytes(raw[i]), dtype=np.object_)
            else:
                item = np.dtype(KSERVE_TO_NP[dt]).itemsize
                if len(raw[i]) != count * item:
                    raise ProtocolError(f"input '{name}': {len(raw[i])} bytes of raw contents, shape {shape} of "
                                        f"{dt} needs {count * item}")
                arr = np.frombuffer(raw[i], dtype=KSERVE_TO_NP[dt])
        else:
            field = _CONTENTS_FIELD.get(dt)
            if field is None:
                raise ProtocolError(f"input '{name}': {dt} has no typed contents; send it in raw_input_contents")
            values = getattr(t.contents, field)
            arr = (np.array(list(values), dtype=np.object_) if dt == "BYTES"
                   else np.array(values, dtype=KSERVE_TO_NP[dt]))
        if arr.size != count:
            raise ProtocolError(f"input '{name}': {arr.size} elements for shape {shape}")
        feed[name] = arr.reshape(shape)
    return feed


class InferenceServicer(pb_grpc.GRPCInferenceServiceServicer):
    """KServe v2 gRPC over the agent's served models; management RPCs are left UNIMPLEMENTED on purpose."""

    def __init__(self, core: AgentCore, metrics: AgentMetrics, executor: ThreadPoolExecutor,
                 gate: Any = None) -> None:
        self.core, self.metrics, self.executor = core, metrics, executor
        self.gate = gate  # studio.agent.limits.InflightGate shared with the HTTP side (None: no cap)

    def _model_or_abort(self, name: str, version: str, context: grpc.ServicerContext) -> Any:
        m = self.core.find(name, version)
        if m is None:
            context.abort(grpc.StatusCode.NOT_FOUND, unknown_model(name)
                          + (f" (version '{version}')" if version else ""))
        return m

    # -- health and metadata ---------------------------------------------------------------------------
    def ServerLive(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802 (gRPC names)
        return pb.ServerLiveResponse(live=True)

    def ServerReady(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        return pb.ServerReadyResponse(ready=True)

    def ModelReady(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        return pb.ModelReadyResponse(ready=self.core.find(request.name, request.version) is not None)

    def ServerMetadata(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        return pb.ServerMetadataResponse(name="studio-agent", version=__version__, extensions=["model_repository", "statistics"])

    def ModelMetadata(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        m = self._model_or_abort(request.name, request.version, context)
        md = m.metadata()
        tm = pb.ModelMetadataResponse.TensorMetadata
        return pb.ModelMetadataResponse(
            name=m.name, versions=[m.version], platform=md.get("platform", "onnxruntime_onnx"),
            inputs=[tm(name=t.name, datatype=t.datatype, shape=t.shape) for t in m.inputs],
            outputs=[tm(name=t.name, datatype=t.datatype, shape=t.shape) for t in m.outputs])

    def RepositoryIndex(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        idx = pb.RepositoryIndexResponse.ModelIndex
        return pb.RepositoryIndexResponse(models=[idx(name=n, version=m.version, state="READY")
                                                  for n, m in sorted(self.core.served.items())])

    # -- statistics (Triton's extension, the HTTP side's counters; see studio.agent.statistics) --------------
    def ModelStatistics(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        try:
            chosen = self.core.statistics.select(self.core.served, request.name, request.version)
        except StatisticsError as exc:  # Triton: INVALID_ARG
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        return pb.ModelStatisticsResponse(model_stats=[s.to_proto(pb) for s in chosen])

    # -- inference -------------------------------------------------------------------------------------
    def ModelInfer(self, request: Any, context: grpc.ServicerContext) -> Any:  # noqa: N802
        metrics, name = self.metrics, request.model_name
        m = self.core.find(name, request.model_version)
        if m is None:
            metrics.errors.labels("unknown", "unknown_model").inc()  # one label, whatever names clients send
            context.abort(grpc.StatusCode.NOT_FOUND, unknown_model(name))
        if self.gate is not None:
            from studio.agent.limits import LimitExceeded

            try:
                self.gate.enter(name)
            except LimitExceeded as exc:
                metrics.errors.labels(name, exc.reason).inc()
                context.abort(grpc.StatusCode.UNAVAILABLE, exc.message)
        try:
            return self._model_infer(m, request, context)
        finally:
            if self.gate is not None:
                self.gate.leave(name)

    def _model_infer(self, m: Any, request: Any, context: grpc.ServicerContext) -> Any:
        metrics, name = self.metrics, request.model_name
        stats = self.core.statistics.of(name, m.version)
        t0 = time.perf_counter()
        metrics.inflight.inc()
        try:
            out, t_in, t_r0, t_r1 = self._infer(m, request)
        except _Abort as exc:
            metrics.requests.labels(name, "error").inc()
            stats.record_failure(time.perf_counter() - t0)
            context.abort(exc.code, exc.message)
        finally:
            metrics.inflight.dec()
        t_end = time.perf_counter()
        metrics.latency.labels(name).observe(t_end - t0)
        metrics.requests.labels(name, "ok").inc()
        stats.record_success(t_end - t0, t_r0 - t_in, t_in - t0, t_r1 - t_r0, t_end - t_r1)
        return out

    def _infer(self, m: Any, request: Any) -> tuple[Any, float, float, float]:
        """(response, inputs decoded, run started, run ended): ``perf_counter`` stamps for the statistics."""
        name, metrics = m.name, self.metrics
        try:
            feed = decode_infer_request(request)
            wanted = [o.name for o in request.outputs] or None
            for n in wanted or ():
                if not m.has_output(n):
                    raise ProtocolError(f"unexpected inference output '{n}' for model '{name}'")
            if m.raw_inputs and not m.raw_inputs.keys().isdisjoint(feed):
                raise _Abort(grpc.StatusCode.UNIMPLEMENTED,
                             f"raw inputs ({', '.join(sorted(m.raw_inputs))}) of model '{name}' are preprocessed "
                             "on the HTTP endpoint only; send the model's tensors over gRPC, or use HTTP")
            m.check_inputs(feed)
        except ValueError as exc:  # ProtocolError included
            metrics.errors.labels(name, "bad_request").inc()
            raise _Abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None
        t_in = time.perf_counter()
        try:
            results, t_r0, t_r1 = self.executor.submit(timed_infer, m, feed, wanted).result()
        except Exception as exc:  # ORT failure on this input
            metrics.errors.labels(name, "inference").inc()
            raise _Abort(grpc.StatusCode.INTERNAL, f"inference failed: {exc}") from None
        resp = pb.ModelInferResponse(model_name=name, model_version=m.version, id=request.id)
        for n in wanted or results:
            arr = results[n]
            dt = datatype_of(arr)
            resp.outputs.add(name=n, datatype=dt, shape=list(arr.shape))
            resp.raw_output_contents.append(_serialize_bytes(arr) if dt == "BYTES"
                                            else np.ascontiguousarray(arr).tobytes())
        return resp, t_in, t_r0, t_r1


class _TokenInterceptor(grpc.ServerInterceptor):
    """Every RPC but the health probes needs ``authorization: Bearer TOKEN`` metadata (``--infer-token-file``)."""

    OPEN = OPEN_RPCS  # the table's auth="none" rows with a gRPC twin (studio.agent.endpoints)

    def __init__(self, token: str) -> None:
        self._want = token.encode()

        def deny(request: Any, context: grpc.ServicerContext) -> Any:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong inference token (this agent requires "
                                                           "authorization: Bearer TOKEN metadata)")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        if details.method.endswith(self.OPEN):
            return continuation(details)
        import hmac

        given = dict(details.invocation_metadata or ()).get("authorization", "")
        if given[:7].lower() == "bearer " and hmac.compare_digest(given[7:].strip().encode(), self._want):
            return continuation(details)
        return self._deny


def start_grpc_server(core: AgentCore, metrics: AgentMetrics, executor: ThreadPoolExecutor, host: str, port: int,
                      *, tls_cert: Path | None = None, tls_key: Path | None = None,
                      handler_threads: int = 8, max_message_bytes: int = 64 << 20, gate: Any = None,
                      infer_token: str | None = None, client_ca: Path | None = None) -> grpc.Server:
    """Start the gRPC server on ``host:port`` (TLS when cert and key are given) and return it; ``stop()`` it.

    ``handler_threads`` only decode/encode and wait; model runs go to ``executor`` (the HTTP side's).
    ``max_message_bytes`` caps a request (RESOURCE_EXHAUSTED past it, from grpc itself); ``gate`` is the HTTP
    side's per-model in-flight cap (UNAVAILABLE past it)."""
    opts = [("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            ("grpc.so_reuseport", 0)]
    server = grpc.server(ThreadPoolExecutor(max_workers=handler_threads, thread_name_prefix="grpc"), options=opts,
                         interceptors=[_TokenInterceptor(infer_token)] if infer_token else None)
    pb_grpc.add_GRPCInferenceServiceServicer_to_server(InferenceServicer(core, metrics, executor, gate), server)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        if tls_cert and tls_key:
            creds = grpc.ssl_server_credentials([(tls_key.read_bytes(), tls_cert.read_bytes())],
                                                root_certificates=client_ca.read_bytes() if client_ca else None,
                                                require_client_auth=client_ca is not None)
            bound = server.add_secure_port(address, creds)
        else:
            bound = server.add_insecure_port(address)
    except RuntimeError:  # newer grpcio raises instead of returning 0
        bound = 0
    if not bound:
        from studio.core.errors import InputError

        raise InputError(f"cannot bind the gRPC server to {address}", offending=str(port),
                         hint="pick a free --grpc-port")
    server.start()
    log.info("KServe v2 gRPC on %s%s", address, " (TLS)" if tls_cert else "")
    return server

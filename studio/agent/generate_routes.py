"""Triton's generate extension on the agent: ``POST /v2/models/{m}[/versions/{v}]/generate`` and ``generate_stream``.

``generate`` answers one JSON object (``model_name``, ``model_version``, ``text_output``, ``finish_reason``,
``usage``); ``generate_stream`` answers server-sent events, one ``data: {...}`` per text piece with
``text_output``, the last one carrying ``finish_reason`` and ``usage`` (prompt / completion tokens, ttft_ms,
tokens_per_s). The request is checked before a slot is taken (400 naming the field); a model already running
``--max-generations`` generations answers 503 with Retry-After. The generation runs on a kept worker thread and
hands text pieces to the event loop through an asyncio queue; when the client goes away (a disconnect, or a
failed send) a stop flag is set, the runtime ends at its next token and the slot is freed. The agent's ASGI
fast path dispatches here (as it serves ``/infer``) and checks the inference token (``--infer-token-file``) first.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi.responses import JSONResponse
from starlette.responses import Response

from studio.agent.core import AgentCore, unknown_model
from studio.agent.limits import LimitExceeded, Limits, decompress, read_body
from studio.agent.metrics import AgentMetrics
from studio.agent.responses import error_response
from studio.generate.requests import GenerateInputError, StopStrings


class GenerationSlots:
    """Generations running per model name; a full model answers 503 with Retry-After (like the InflightGate)."""

    def __init__(self, per_model: int, retry_after_s: int = 1) -> None:
        self.per_model, self.retry_after_s = per_model, retry_after_s
        self._n: dict[str, int] = {}
        self._lock = threading.Lock()

    def try_enter(self, name: str) -> bool:
        with self._lock:
            n = self._n.get(name, 0)
            if n >= self.per_model:
                return False
            self._n[name] = n + 1
            return True

    def leave(self, name: str) -> None:
        with self._lock:
            self._n[name] = max(0, self._n.get(name, 1) - 1)

    def count(self, name: str) -> int:
        return self._n.get(name, 0)


UNKNOWN_MODEL = "unknown"
FIRST_SEND_WAIT_S = 0.005  # the most a generation waits for its first event to be written (a slow loop)
INLINE_PARSE_BYTES = 16 << 10  # bodies up to this are parsed on the event loop (about 4k tokens: ~1 ms)
_SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no")]


def _sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class GenerationWorkers:
    """Daemon threads kept for generations: a request hands its loop to an idle one instead of starting a thread.

    ``Thread.start`` blocks the event loop until the new thread runs (0.7 ms on average on this 2-core host, a
    few ms at worst, measured with py-spy): on every request's time to first token. A new thread is started only
    when none is idle (the slots bound how many run per model); daemon, so a stopping agent never waits for one."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self.started = 0

    @property
    def idle(self) -> int:
        """Threads waiting for a generation."""
        return self._idle

    def submit(self, fn: Callable[[], None]) -> None:
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self.started += 1
            else:
                self._idle -= 1
        self._work.put(fn)
        if spawn:
            threading.Thread(target=self._serve, daemon=True, name=f"generate-{self.started}").start()

    def _serve(self) -> None:
        while True:
            fn = self._work.get()
            try:
                fn()
            except Exception:  # noqa: BLE001 - _Run._work reports its own failures; this thread must live on
                pass
            with self._lock:
                self._idle += 1


class _Run:
    """One generation in its worker thread: text pieces and the end go to the loop's queue."""

    def __init__(self, name: str, m: Any, req: Any, metrics: AgentMetrics, slots: GenerationSlots,
                 t0: float, workers: GenerationWorkers) -> None:
        self.name, self.m, self.req, self.metrics, self.slots, self.t0 = name, m, req, metrics, slots, t0
        self.workers = workers
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.cancel = threading.Event()
        self.first: float | None = None
        self.stops = StopStrings(req.stop)
        self.client_gone = False
        self.raw = ""  # the text pieces the runtime's streamer gave, before stop strings
        # streaming: set by the writer once the first piece's event is out; the worker waits for it (below)
        self.first_sent: threading.Event | None = None

    def start(self) -> None:
        self.workers.submit(self._work)

    def _put(self, item: tuple[str, Any]) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, item)

    def _on_text(self, piece: str) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        self.raw += piece
        shown = self.stops.feed(piece)
        if self.stops.hit:
            self.cancel.set()  # a stop string: the runtime ends at this token
        if shown:
            self._put(("text", shown))
            gate = self.first_sent
            if gate is not None:  # time to first token: let the loop write it before the next step's Python
                self.first_sent = None  # holds the GIL (a wait of ~0.3 ms otherwise, on every TTFT)
                gate.wait(FIRST_SEND_WAIT_S)

    def _work(self) -> None:
        end: tuple[str, Any] = ("error", RuntimeError("generation thread ended without a result"))
        try:
            result = self.m.generation.run(self.req, self._on_text, self.cancel.is_set)
            rest = result.text[len(self.raw):] if result.text.startswith(self.raw) else ""
            # the streamer holds back a last partial character: the answer ends as the whole decode does
            tail = ("" if self.stops.hit else self.stops.feed(rest)) + self.stops.flush()
            if tail:
                self._put(("text", tail))
            end = ("done", result)
        except Exception as exc:  # an ORT failure on this request: reported, the agent goes on
            end = ("error", exc)
        finally:
            self.slots.leave(self.name)  # before the end is seen: a client's next request finds the slot free
            self._put(end)

    def usage(self, result: Any, client_gone: bool) -> dict[str, Any]:
        """finish_reason and usage of a finished generation, recorded in the agent's metrics."""
        reason = result.finish_reason
        if self.stops.hit:
            reason = "stop"
        elif reason == "cancelled" and not client_gone:
            reason = "stop"
        n = len(result.token_ids)
        ttft = ((self.first or time.perf_counter()) - self.t0) * 1e3
        itl = (result.total_ms - result.ttft_ms) / (n - 1) if n > 1 else None
        self.metrics.observe_generation(self.name, reason, n, ttft / 1e3, None if itl is None else itl / 1e3)
        return {"finish_reason": reason,
                "usage": {"prompt_tokens": len(result.prompt_token_ids), "completion_tokens": n,
                          "ttft_ms": round(ttft, 3), "runtime_ttft_ms": result.ttft_ms,
                          "inter_token_ms": None if itl is None else round(itl, 3),
                          "tokens_per_s": result.tokens_per_s, "total_ms": result.total_ms,
                          "runtime": result.runtime}}


async def _watch_disconnect(receive: Any, run: _Run) -> None:
    """Sets the stop flag when the client goes away (the body was read whole before)."""
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            run.client_gone = True
            run.cancel.set()
            return


class _Stream(Response):
    """An ASGI response writing the generation as server-sent events; any way out sets the stop flag.

    Written at the ASGI level rather than with StreamingResponse so that a disconnect is seen while waiting for
    the next token (not only at the next send) and the stop flag is set on every way out."""

    def __init__(self, run: _Run, head: dict[str, Any], first_sent: threading.Event | None = None) -> None:
        self.run, self.head, self.first_sent = run, head, first_sent
        self.status_code, self.background = 200, None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        run = self.run
        watcher = asyncio.ensure_future(_watch_disconnect(receive, run))
        started = False
        first_gate = self.first_sent
        try:
            while True:
                get = asyncio.ensure_future(run.queue.get())
                await asyncio.wait({get, watcher}, return_when=asyncio.FIRST_COMPLETED)
                if not get.done():
                    get.cancel()
                    break  # the client went away
                kind, value = get.result()
                if not started:  # the head leaves with the first event, in one write (one TCP segment)
                    await send({"type": "http.response.start", "status": 200, "headers": list(_SSE_HEADERS)})
                    started = True
                if kind == "text":
                    await send({"type": "http.response.body", "body": _sse({**self.head, "text_output": value}),
                                "more_body": True})
                    if first_gate is not None:
                        first_gate.set()
                        first_gate = None
                    continue
                if kind == "done":
                    body = _sse({**self.head, "text_output": "", **run.usage(value, False)})
                    run.metrics.generate_requests.labels(run.name, "ok").inc()
                else:
                    body = _sse({"error": f"generation failed: {value}"})
                    run.metrics.generate_requests.labels(run.name, "error").inc()
                await send({"type": "http.response.body", "body": body, "more_body": False})
                return
        except OSError:  # a send on a closed connection
            pass
        finally:
            watcher.cancel()
            run.cancel.set()  # the runtime stops at its next token; the worker frees the slot
        run.client_gone = True
        await _finish_cancelled(run)


async def _finish_cancelled(run: _Run) -> None:
    """After the client left: wait for the worker's end (one token away) and record how it ended."""
    while True:
        kind, value = await run.queue.get()
        if kind == "done":
            run.usage(value, True)
            run.metrics.generate_requests.labels(run.name, "cancelled").inc()
            return
        if kind == "error":
            run.metrics.generate_requests.labels(run.name, "error").inc()
            return


class GenerateRoutes:
    """The two generate routes, called by the agent's ASGI fast path (``studio.agent.server.InferFastPath``) with
    the model name and version it parsed from the path: no FastAPI routing or request object on the way to the
    first token (the same reason ``/infer`` is served there)."""

    def __init__(self, core: AgentCore, metrics: AgentMetrics, limits: Limits) -> None:
        self.core, self.metrics, self.limits = core, metrics, limits
        self.slots = GenerationSlots(limits.max_generations, limits.retry_after_s)
        self.workers = GenerationWorkers()

    async def __call__(self, scope: dict, receive: Any, send: Any, name: str, version: str | None,
                       stream: bool) -> None:
        t0 = time.perf_counter()
        if scope["method"] != "POST":
            response: Any = JSONResponse({"error": "generate takes POST"}, status_code=405, headers={"allow": "POST"})
        else:
            response = await self._answer(scope, receive, t0, name, version, stream)
        await response(scope, receive, send)

    async def _answer(self, scope: dict, receive: Any, t0: float, name: str, version: str | None,
                      stream: bool) -> Any:
        core, metrics, limits, slots = self.core, self.metrics, self.limits, self.slots
        length = encoding = None
        for k, v in scope["headers"]:
            if k == b"content-length":
                length = v
            elif k == b"content-encoding":
                encoding = v.strip().lower() or None
        m = core.find(name, version)
        label = name if m is not None else UNKNOWN_MODEL
        try:
            body = await read_body(receive, limits, length)
            if body is None:
                return JSONResponse({"error": "client went away"}, status_code=499)
            body = decompress(body, encoding, limits)
        except LimitExceeded as exc:
            metrics.generate_requests.labels(label, "rejected").inc()
            return JSONResponse({"error": exc.message, "kind": "limit", "limit": exc.reason},
                                status_code=exc.status, headers={k.decode(): v.decode() for k, v in exc.headers})
        if m is None:
            metrics.generate_requests.labels(UNKNOWN_MODEL, "unknown_model").inc()
            return error_response(404, unknown_model(name))
        gm = getattr(m, "generation", None)
        if gm is None:
            metrics.generate_requests.labels(name, "bad_request").inc()
            return error_response(400, f"model '{name}' does not support generate: it is not a generation export",
                                  kind="input", hint="deploy a bundle packaged from `studio export --with-past`; "
                                                     "use /infer for this model")
        try:
            try:
                data = json.loads(body)
            except ValueError as exc:
                raise GenerateInputError("body", f"the request body is not JSON: {exc}",
                                         hint='send {"text_input": "..."}') from exc
            # a short body is checked (tokenised) on the loop: a thread hand-off would cost more than the work
            req = gm.parse(data) if len(body) <= INLINE_PARSE_BYTES else \
                await asyncio.get_running_loop().run_in_executor(None, gm.parse, data)
        except GenerateInputError as exc:
            metrics.generate_requests.labels(name, "bad_request").inc()
            return JSONResponse(exc.to_dict(), status_code=400)
        if not slots.try_enter(name):
            metrics.generate_requests.labels(name, "overloaded").inc()
            return JSONResponse({"error": f"model '{name}' is running {slots.per_model} generations, this agent's "
                                          "limit (--max-generations); retry shortly", "kind": "limit",
                                 "limit": "generations"}, status_code=503,
                                headers={"retry-after": str(slots.retry_after_s)})
        run = _Run(name, m, req, metrics, slots, t0, self.workers)
        gate = run.first_sent = threading.Event() if stream else None
        run.start()
        head = {"model_name": name, "model_version": m.version}
        if stream:
            return _Stream(run, head, gate)
        return await self._collect(run, receive, head)

    async def _collect(self, run: _Run, receive: Any, head: dict[str, Any]) -> Any:
        metrics = self.metrics
        watcher = asyncio.ensure_future(_watch_disconnect(receive, run))
        pieces: list[str] = []
        try:
            while True:
                kind, value = await run.queue.get()
                if kind == "text":
                    pieces.append(value)
                elif kind == "done":
                    gone = run.client_gone
                    out = {**head, "text_output": "".join(pieces), **run.usage(value, gone)}
                    metrics.generate_requests.labels(run.name, "cancelled" if gone else "ok").inc()
                    return JSONResponse(out)
                else:
                    metrics.generate_requests.labels(run.name, "error").inc()
                    return error_response(500, f"generation failed: {value}")
        finally:
            watcher.cancel()

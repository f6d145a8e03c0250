"""The Locust side of `studio bench --locust`: one worker process, on this host or a lab host.

Each worker runs one Locust user (the studio's request bytes over keep-alive sockets whose responses OS threads read:
``locust_client``) that drives its share of a level (a rate share, open loop, sent from an OS thread at each due
time, latency from each request's due time; or a number of closed-loop greenlets) and reports every window to the
master as a custom message carrying an encoded HDR histogram (``studio.telemetry.histogram``), counts, errors and
per-tick bytes. Windows are aligned on the wall clock the master hands out, so the master merges window k of every
worker into one. The workload (server, request bytes, pool, timeout) comes from the master with each level's plan,
so a worker needs nothing but the master's address:

    python -m studio.telemetry.locustfile --master-host STUDIO_HOST [--master-port 5557]
    locust -f .../studio/telemetry/locustfile.py --worker --master-host STUDIO_HOST [--master-port 5557]

Imported as ``studio.telemetry.locustfile`` this module imports nothing of locust (locust monkey-patches on import):
``main`` does, in the worker; loaded by the ``locust`` command (module name ``locustfile``) it defines the user.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import random
import time
from collections import Counter, deque
from typing import Any

from studio.telemetry.histogram import LatencyHistogram


class WorkerMeter:
    """Counts of one worker's level: warm-up totals, the open window, its ticks, the send delays."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.measure_at = plan["start"] + plan["warmup_s"]
        self.window_s, self.tick_s = plan["window_s"], plan["tick_s"]
        self.warm_sent = self.warm_ok = 0
        self.index = 0
        self.delays = LatencyHistogram()
        self.stopped = False
        self.opened = self.measure_at  # the open window's start: measure_at, then the previous window's close
        self.last_done = 0.0  # when the last measured request completed
        self.lock: Any = contextlib.nullcontext()  # the open loop's: its sender thread counts sends (on_sent)
        self._open()

    def _open(self) -> None:
        self.hist = LatencyHistogram()
        self.ok = self.sent = self.nbytes = 0
        self.errors: Counter[str] = Counter()
        self.ticks = [0] * max(1, round(self.window_s / self.tick_s))

    def measuring(self, t: float) -> bool:
        return t >= self.measure_at

    def on_sent(self, due: float) -> None:
        if self.measuring(due):
            self.sent += 1
        else:
            self.warm_sent += 1

    def on_done(self, due: float, t_done: float, latency: float, nbytes: int, error: str | None) -> None:
        if not self.measuring(due):
            self.warm_ok += error is None
            return
        self.last_done = max(self.last_done, t_done)
        if error is None:
            self.ok += 1
            self.hist.record(latency)
        else:
            self.errors[error] += 1
        self.nbytes += nbytes
        offset = (t_done - self.measure_at) % self.window_s
        self.ticks[min(len(self.ticks) - 1, int(offset / self.tick_s))] += nbytes

    def window_end(self) -> float:
        return self.measure_at + (self.index + 1) * self.window_s

    def close_window(self, final: bool = False) -> dict[str, Any]:
        """The window's counts and the span they were counted over: the window closes when its greenlet wakes,
        ms after the nominal end, and what completed meanwhile is in it (dividing by window_s read 1-2.7 % high)."""
        with self.lock:
            t = time.time()
            msg = {"level": self.plan["level"], "index": self.index, "ok": self.ok, "sent": self.sent,
                   "errors": dict(self.errors), "bytes": self.nbytes, "ticks": self.ticks,
                   "hist": self.hist.encode().decode() if self.hist.count else "", "final": final,
                   "t_open": self.opened, "t_close": t}
            self.opened = t
            self.index += 1
            self._open()
        return msg


def _error_kind(exc: BaseException | None, status: int) -> str | None:
    if exc is None:
        return None if status == 200 else f"http_{status}"
    from studio.telemetry.load_types import classify_error

    return classify_error(exc)


class Workload:
    """What the master's plan says to send: the server, the request bytes, the pool size, the timeout."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.host, self.port = spec["server_host"], int(spec["server_port"])
        self.requests = [base64.b64decode(b) for b in spec["requests"]]
        self.pool, self.timeout_s = int(spec["max_connections"]), float(spec["timeout_s"])


class Lane:
    """One keep-alive connection of a worker (``box``: the connection, reopened after a failure) and the request
    on it: due time, bytes, start, whether the greenlet that started it already sent it, and what its connection's
    receiver thread delivered for it (``result``, with ``event`` set; ``event`` is also set, with no result, to
    ask the lane's greenlet to connect and send)."""

    def __init__(self, requests: list[bytes], first: int = 0) -> None:
        import gevent.event

        self.box: list[Any] = [None]
        self.requests, self.i = requests, first
        self.due: float | None = None
        self.raw, self.t0, self.sent, self.exc = b"", 0.0, False, None
        self.request_id = 0
        self.result: Any = None
        self.event = gevent.event.Event()
        self.greenlet: Any = None

    def take(self, due: float) -> bytes:
        self.due, self.raw = due, self.requests[self.i % len(self.requests)]
        self.i += 1
        self.request_id += 1
        self.sent, self.exc, self.result = False, None, None
        self.t0 = time.perf_counter()
        return self.raw

    def deliver(self, request_id: int, result: Any) -> None:
        """In the hub, from the receiver thread: the response (or error) of request ``request_id``; one for an
        earlier request (its connection failed as the lane moved on) is dropped."""
        if request_id == self.request_id and self.due is not None:
            self.result = result
            self.event.set()

    def wait_result(self) -> Any:
        self.event.wait()
        self.event.clear()
        result, self.result = self.result, None
        return result


def make_user_class(plans: Any) -> type:
    """The Locust user whose one task runs each level plan the master sends (``plans``: a gevent queue): the
    studio's request bytes through ``locust_client.RawConnection``, every request reported on Locust's request
    event."""
    import gevent
    import gevent.event
    import gevent.pool
    from locust import User, task

    from studio.telemetry.locust_client import Inbox, RawConnection

    class KServeV2User(User):  # the master spawns it by this name
        abstract = False
        wl: Workload

        def _send(self, meter: WorkerMeter, lane: Lane, due: float) -> None:
            """Start the request due at ``due`` on ``lane`` where both were found (the sender thread at its
            wake-up, or the lane's greenlet as its previous response completed; under ``meter.lock``): no
            hand-over to another thread or greenlet."""
            meter.on_sent(due)
            if meter.measuring(due):
                meter.delays.record(max(0.0, time.time() - due))
            raw = lane.take(due)
            conn = lane.box[0]
            if conn is not None and conn.open:  # its receiver thread delivers the response to the lane
                lane.sent = True
                try:
                    conn.send(raw, lane.request_id)
                except Exception as e:  # noqa: BLE001 - counted by _complete
                    lane.exc = e
                    conn.close()

        def _complete(self, meter: WorkerMeter, lane: Lane, result: Any = None) -> None:
            """Finish the request started on ``lane``: (re)connect and send when not sent yet, wait for what the
            connection's receiver thread delivers for it (or take ``result``, delivered already), count it; a
            failed request is counted and its connection dropped. Latency ends when the receiver thread parsed
            the response's last byte, not when this greenlet ran."""
            assert lane.due is not None
            due, raw, box, wl = lane.due, lane.raw, lane.box, self.wl
            exc: BaseException | None = lane.exc or (result if isinstance(result, BaseException) else None)
            status, nbytes, t_done, t_perf = 0, 0, 0.0, 0.0
            try:
                if exc is not None:
                    raise exc
                if result is None:
                    if not lane.sent:
                        if box[0] is None or not box[0].open:
                            if box[0] is not None:
                                box[0].close()
                            box[0] = RawConnection(wl.host, wl.port, wl.timeout_s, self.inbox, lane.deliver)
                        lane.sent = True
                        box[0].send(raw, lane.request_id)
                    result = lane.wait_result()  # the receiver thread delivers a response or an error
                    if isinstance(result, BaseException):
                        raise result
                status, received, t_done, t_perf = result
                nbytes = len(raw) + received
                if not box[0].open:  # the server answered "Connection: close"
                    box[0].close()
            except Exception as e:  # noqa: BLE001 - a failed request is counted, not raised
                exc = e
                if box[0] is not None:
                    box[0].close()
            if exc is not None:
                t_done, t_perf = time.time(), time.perf_counter()
            kind = _error_kind(exc, status)
            self.environment.events.request.fire(
                request_type="POST", name="infer", response_time=(t_perf - lane.t0) * 1e3,
                response_length=nbytes, context={}, url=None,
                exception=None if kind is None else (exc or RuntimeError(f"HTTP {status}")))
            meter.on_done(due, t_done, t_done - due, nbytes, kind)

        def _run_plan(self, plan: dict[str, Any]) -> None:
            meter = WorkerMeter(plan)
            self.wl = wl = Workload(plan["workload"])
            if getattr(self, "inbox", None) is None:
                self.inbox = Inbox()
            runner = self.environment.runner
            gevent.sleep(max(0.0, plan["start"] - time.time()))
            group = gevent.pool.Group()
            rng = random.Random(plan["seed"])
            scheduler = None
            if plan.get("rate"):
                scheduler = group.spawn(self._open_loop, meter, plan, rng, group)
            else:
                for _ in range(plan["users"]):
                    group.spawn(self._closed_loop, meter, rng)
            while not plan["stop"].wait(timeout=max(0.0, meter.window_end() - time.time())):
                runner.send_message("studio_window", meter.close_window())
            meter.stopped = True
            t_stop = time.time()
            if scheduler is not None:  # now, not at its next due time (up to n / rate later): nothing more is sent
                scheduler.kill(block=True)
            group.join(timeout=wl.timeout_s)
            group.kill()
            done = meter.close_window(final=True)
            # the span this worker's counted requests cover, as the load generator's measured seconds do: from
            # measure_at (they are the ones due from then) until the stop, or the last of them answered after it
            # (not the senders' socket closes after that, which took 2-25 ms here)
            done.update(measure_at=meter.measure_at, t_stop=t_stop, t_end=max(t_stop, meter.last_done),
                        warm_sent=meter.warm_sent, warm_ok=meter.warm_ok,
                        delays=meter.delays.encode().decode() if meter.delays.count else "")
            runner.send_message("studio_done", done)

        def _open_loop(self, meter: WorkerMeter, plan: dict[str, Any], rng: random.Random, group: Any) -> None:
            """The load generator's open loop: due times queue in ``backlog`` and go out on the first free lane of
            ``pool`` (one connection each); a due time waiting for a free lane is latency, as it is for the load
            generator. An OS thread wakes at each due time (a blocking timerfd read) and sends on a free lane
            itself, then blocks again at once: a client still running after its send made the server's wake-up
            ~0.1 ms slower here (BENCHMARKS.md). This greenlet waits for the thread; its kill stops the thread."""
            import gevent.event

            from studio.telemetry.due_timer import ThreadDueTimer
            from studio.telemetry.locust_client import original

            rate, poisson = plan["rate"], plan["distribution"] == "poisson"
            meter.lock = lock = original("_thread", "allocate_lock")()  # backlog, idle, on_sent, windows
            backlog: deque[float] = deque()
            lanes = [Lane(self.wl.requests) for _ in range(self.wl.pool)]
            idle = deque(lanes)  # first in, first out: the connections take turns, as the load generator's do
            for lane in lanes:
                lane.greenlet = group.spawn(self._lane, meter, lane, backlog, idle)
            timer = ThreadDueTimer()  # sub-millisecond wake-ups without a busy-wait (which took the agent's CPU)
            ended, joined, failed = gevent.event.Event(), original("_thread", "allocate_lock")(), []
            read = original("os", "read")

            def sender() -> None:
                due = plan["start"] + (0.0 if poisson else plan["offset"])
                try:
                    while not meter.stopped:
                        now = time.time()
                        with lock:
                            if meter.stopped:
                                break
                            while due <= now:
                                backlog.append(due)
                                due += rng.expovariate(rate) if poisson else 1.0 / rate
                            while backlog and idle:
                                lane = idle.popleft()
                                self._send(meter, lane, backlog.popleft())
                                if not lane.sent or lane.exc is not None:  # no connection yet (the lane
                                    # connects and sends), or the send failed (the lane counts it)
                                    self.inbox.post(lane.deliver, lane.request_id, None)
                        timer.wait_until(due, read)
                except BaseException as e:  # noqa: BLE001 - raised again in the greenlet
                    failed.append(e)
                finally:
                    joined.release()
                    self.inbox.post(lambda _id, _r: ended.set(), 0, None)

            joined.acquire()
            original("_thread", "start_new_thread")(sender, ())
            try:
                ended.wait()
                if failed:
                    raise failed[0]
            finally:  # also when the stop kills this greenlet in its wait: idle lanes end, busy ones finish
                timer.stop()  # the thread returns from its read at once
                with joined:  # (it holds the lock until it has ended)
                    pass
                timer.close()
                for lane in lanes:
                    if lane.due is None:
                        lane.greenlet.kill(block=False)

        def _lane(self, meter: WorkerMeter, lane: Lane, backlog: deque[float], idle: deque[Lane]) -> None:
            """One connection of the open loop. The greenlet waits on the lane's event: its connection's
            receiver thread delivers the response to a request the sender thread sent on it (nothing to wake
            after a send: waking the greenlet after each send cost 0.1-0.2 ms of latency here), or the sender
            thread asks it to connect and send."""
            try:
                while True:
                    result = lane.wait_result()
                    if lane.due is None:
                        continue
                    self._complete(meter, lane, result)
                    while True:  # due times that waited for a free lane go out from here
                        with meter.lock:
                            lane.due = None
                            if meter.stopped:
                                break
                            if not backlog:
                                idle.append(lane)
                                break
                            self._send(meter, lane, backlog.popleft())
                        if lane.sent and lane.exc is None:
                            break  # its response comes to the wait above
                        self._complete(meter, lane)
                    if meter.stopped and lane.due is None:
                        break
            finally:
                if lane.box[0] is not None:
                    lane.box[0].close()

        def _closed_loop(self, meter: WorkerMeter, rng: random.Random) -> None:
            lane = Lane(self.wl.requests, rng.randrange(len(self.wl.requests)))
            while not meter.stopped:
                due = time.time()
                meter.on_sent(due)
                lane.take(due)
                self._complete(meter, lane)
            if lane.box[0] is not None:
                lane.box[0].close()

        @task
        def drive(self) -> None:
            plan = plans.get()
            if plan is None:
                raise gevent.GreenletExit
            self._run_plan(plan)

    return KServeV2User


def attach(runner: Any, plans: Any) -> None:
    """The worker's side of the master's custom messages: a level's plan starts the user's task, a stop ends it."""
    import gevent.event

    current: dict[str, Any] = {}

    def on_level(environment: Any, msg: Any, **_kw: Any) -> None:
        plan = dict(msg.data)
        plan["stop"] = gevent.event.Event()
        current["plan"] = plan
        plans.put(plan)

    def on_stop(environment: Any, msg: Any, **_kw: Any) -> None:
        plan = current.get("plan")
        if plan is not None and plan["level"] == msg.data["level"]:
            plan["stop"].set()

    runner.register_message("studio_level", on_level)
    runner.register_message("studio_stop", on_stop)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m studio.telemetry.locustfile",
                                 description="One Locust worker of `studio bench --locust`; the master sends the "
                                             "workload. Exits when the master ends the run.")
    ap.add_argument("--master-host", default="127.0.0.1")
    ap.add_argument("--master-port", type=int, default=5557, help="the master's port (default 5557, Locust's)")
    ap.add_argument("--config", default=None, help=argparse.SUPPRESS)  # older studios' run file: unused now
    args = ap.parse_args(argv)
    import gevent.queue
    from locust import events
    from locust.env import Environment

    plans: Any = gevent.queue.Queue()
    env = Environment(user_classes=[make_user_class(plans)], events=events)
    runner = env.create_worker_runner(args.master_host, args.master_port)
    attach(runner, plans)
    runner.greenlet.join()
    return 0


def _locust_command_user() -> type:
    """The user class for the ``locust`` command's worker, its message handlers hooked on Locust's init event."""
    import gevent.queue
    from locust import events
    from locust.runners import WorkerRunner

    plans: Any = gevent.queue.Queue()

    @events.init.add_listener
    def _on_init(environment: Any, **_kw: Any) -> None:
        if isinstance(environment.runner, WorkerRunner):
            attach(environment.runner, plans)

    return make_user_class(plans)


if __name__ == "locustfile":  # loaded by `locust -f .../locustfile.py --worker`: locust collects this class
    KServeV2User = _locust_command_user()

if __name__ == "__main__":
    raise SystemExit(main())

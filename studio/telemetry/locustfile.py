"""The Locust side of `studio bench --locust`: one worker process, on this host or a lab host.

Each worker runs one Locust user (the studio's request bytes over gevent sockets: ``locust_client``) that drives
its share of a level (a rate share, open loop, latency from each request's due time; or a number of closed-loop
greenlets) and reports every window to the master as a custom message carrying an encoded HDR histogram
(``studio.telemetry.histogram``), counts, errors and per-tick bytes. Windows are aligned on the wall clock the master
hands out, so the master merges window k of every worker into one. The workload (server, request bytes, pool,
timeout) comes from the master with each level's plan, so a worker needs nothing but the master's address:

    python -m studio.telemetry.locustfile --master-host STUDIO_HOST [--master-port 5557]
    locust -f .../studio/telemetry/locustfile.py --worker --master-host STUDIO_HOST [--master-port 5557]

Imported as ``studio.telemetry.locustfile`` this module imports nothing of locust (locust monkey-patches on import):
``main`` does, in the worker; loaded by the ``locust`` command (module name ``locustfile``) it defines the user.
"""

from __future__ import annotations

import argparse
import base64
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
    on it: due time, bytes, start, and whether the greenlet that started it already sent it."""

    def __init__(self, requests: list[bytes], first: int = 0) -> None:
        self.box: list[Any] = [None]
        self.requests, self.i = requests, first
        self.due: float | None = None
        self.raw, self.t0, self.sent, self.exc = b"", 0.0, False, None
        self.wake: Any = None  # a gevent Event: a request for this lane, which has no connection to send it on
        self.greenlet: Any = None

    def take(self, due: float) -> bytes:
        self.due, self.raw = due, self.requests[self.i % len(self.requests)]
        self.i += 1
        self.sent, self.exc = False, None
        self.t0 = time.perf_counter()
        return self.raw


def make_user_class(plans: Any) -> type:
    """The Locust user whose one task runs each level plan the master sends (``plans``: a gevent queue): the
    studio's request bytes through ``locust_client.RawConnection``, every request reported on Locust's request
    event."""
    import gevent
    import gevent.event
    import gevent.pool
    from locust import User, task

    from studio.telemetry.locust_client import DueTimer, RawConnection

    class KServeV2User(User):  # the master spawns it by this name
        abstract = False
        wl: Workload

        def _send(self, meter: WorkerMeter, lane: Lane, due: float) -> None:
            """Start the request due at ``due`` on ``lane`` from the greenlet that found both (the scheduler at
            its wake-up, or the lane as its previous response completed): no hand-over to another greenlet."""
            meter.on_sent(due)
            if meter.measuring(due):
                meter.delays.record(max(0.0, time.time() - due))
            raw = lane.take(due)
            conn = lane.box[0]
            if conn is not None and conn.open:  # the lane waits in its receive: nothing to wake
                lane.sent = True
                try:
                    conn.send(raw)
                except Exception as e:  # noqa: BLE001 - counted by _complete
                    lane.exc = e
                    conn.close()  # which ends the lane's receive

        def _complete(self, meter: WorkerMeter, lane: Lane, result: Any = None) -> None:
            """Finish the request started on ``lane``: (re)connect and send when not sent yet, read the response
            (or take ``result``, what the lane's waiting receive returned or raised), count it; a failed request
            is counted and its connection dropped."""
            assert lane.due is not None
            due, raw, box, wl = lane.due, lane.raw, lane.box, self.wl
            exc: BaseException | None = lane.exc or (result if isinstance(result, BaseException) else None)
            status, nbytes = 0, 0
            try:
                if exc is not None:
                    raise exc
                if not lane.sent:
                    if box[0] is None or not box[0].open:
                        box[0] = RawConnection(wl.host, wl.port, wl.timeout_s)  # times out after timeout_s
                    box[0].send(raw)
                status, received = result if result is not None else box[0].receive()
                nbytes = len(raw) + received
            except Exception as e:  # noqa: BLE001 - a failed request is counted, not raised
                exc = e
                if box[0] is not None:
                    box[0].close()
            t_done = time.time()
            kind = _error_kind(exc, status)
            self.environment.events.request.fire(
                request_type="POST", name="infer", response_time=(time.perf_counter() - lane.t0) * 1e3,
                response_length=nbytes, context={}, url=None,
                exception=None if kind is None else (exc or RuntimeError(f"HTTP {status}")))
            meter.on_done(due, t_done, t_done - due, nbytes, kind)

        def _run_plan(self, plan: dict[str, Any]) -> None:
            meter = WorkerMeter(plan)
            self.wl = wl = Workload(plan["workload"])
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
            generator. The greenlet that finds a due time and a free lane sends it itself: handing each due time
            to a sender greenlet through a gevent queue cost 0.08-0.09 ms more than the load generator's queue."""
            rate, poisson = plan["rate"], plan["distribution"] == "poisson"
            backlog: deque[float] = deque()
            lanes = [Lane(self.wl.requests) for _ in range(self.wl.pool)]
            idle = deque(lanes)  # first in, first out: the connections take turns, as the load generator's do
            for lane in lanes:
                lane.wake = gevent.event.Event()
                lane.greenlet = group.spawn(self._lane, meter, lane, backlog, idle)
            due = plan["start"] + (0.0 if poisson else plan["offset"])
            timer = DueTimer()  # sub-millisecond wake-ups without a busy-wait (which took the agent's CPU)
            try:
                while not meter.stopped:
                    now = time.time()
                    while due <= now:
                        backlog.append(due)
                        due += rng.expovariate(rate) if poisson else 1.0 / rate
                    while backlog and idle:
                        lane = idle.popleft()
                        self._send(meter, lane, backlog.popleft())
                        if not lane.sent:  # no connection yet: the lane connects and sends
                            lane.wake.set()  # (a failed send closed the connection, which ends its receive)
                    timer.wait_until(due)
            finally:  # also when the stop kills this greenlet in its wait: idle lanes end, busy ones finish
                timer.close()
                for lane in lanes:
                    if lane.due is None:
                        lane.greenlet.kill(block=False)

        def _lane(self, meter: WorkerMeter, lane: Lane, backlog: deque[float], idle: deque[Lane]) -> None:
            """One connection of the open loop. Connected, it waits in its socket's receive even while idle, so a
            send on it needs nothing more from the sending greenlet: waking this one after each send (more work
            on a core the server shares, between the send and the response) cost 0.1-0.2 ms of latency here."""
            try:
                while True:
                    conn = lane.box[0]
                    if conn is None or not conn.open:
                        lane.wake.wait()
                        lane.wake.clear()
                        self._complete(meter, lane)  # connects and sends here
                    else:
                        try:
                            result: Any = conn.receive()
                        except TimeoutError as e:  # counted from this wait, which may have begun idle:
                            if lane.due is None or time.perf_counter() - lane.t0 < self.wl.timeout_s:
                                continue  # the request's own timeout_s has not passed
                            result = e
                        except Exception as e:  # noqa: BLE001 - counted by _complete
                            result = e
                        if lane.due is None:  # the server closed an idle connection, or sent unasked bytes
                            conn.close()
                            continue
                        self._complete(meter, lane, result)
                    lane.due = None
                    while backlog and not meter.stopped:  # due times that waited for a free lane go out from here
                        self._send(meter, lane, backlog.popleft())
                        if lane.sent and lane.exc is None:
                            break  # its response comes to the receive above
                        self._complete(meter, lane)
                        lane.due = None
                    if meter.stopped and lane.due is None:
                        break
                    if lane.due is None:
                        idle.append(lane)
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

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
from collections import Counter
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


def make_user_class(plans: Any) -> type:
    """The Locust user whose one task runs each level plan the master sends (``plans``: a gevent queue): the
    studio's request bytes through ``locust_client.RawConnection``, every request reported on Locust's request
    event."""
    import gevent
    import gevent.pool
    import gevent.queue
    from locust import User, task

    from studio.telemetry.locust_client import DueTimer, RawConnection

    class KServeV2User(User):  # the master spawns it by this name
        abstract = False
        wl: Workload

        def _one(self, meter: WorkerMeter, box: list[Any], due: float, raw: bytes) -> None:
            """One request on this greenlet's own keep-alive connection (``box``), reopened after a failure."""
            meter.on_sent(due)
            exc: BaseException | None = None
            status, nbytes = 0, 0
            t0 = time.perf_counter()
            wl = self.wl
            try:
                if box[0] is None or not box[0].open:
                    box[0] = RawConnection(wl.host, wl.port, wl.timeout_s)  # its socket times out after timeout_s
                status, received = box[0].exchange(raw)
                nbytes = len(raw) + received
            except Exception as e:  # noqa: BLE001 - a failed request is counted, not raised
                exc = e
                if box[0] is not None:
                    box[0].close()
            t_done = time.time()
            kind = _error_kind(exc, status)
            self.environment.events.request.fire(
                request_type="POST", name="infer", response_time=(time.perf_counter() - t0) * 1e3,
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
            """The load generator's open loop: a scheduler queues due times, ``pool`` senders (one connection
            each) take them; a due time waiting for a free sender is latency, as it is for the load generator."""
            rate, poisson = plan["rate"], plan["distribution"] == "poisson"
            backlog: Any = gevent.queue.Queue()
            pool = self.wl.pool
            for _ in range(pool):
                group.spawn(self._sender, meter, backlog)
            due = plan["start"] + (0.0 if poisson else plan["offset"])
            timer = DueTimer()  # sub-millisecond wake-ups without a busy-wait (which took the agent's CPU)
            try:
                while not meter.stopped:
                    now = time.time()
                    while due <= now:
                        backlog.put(due)
                        due += rng.expovariate(rate) if poisson else 1.0 / rate
                    timer.wait_until(due)
            finally:  # also when the stop kills this greenlet in its wait
                timer.close()
                for _ in range(pool):
                    backlog.put(None)

        def _sender(self, meter: WorkerMeter, backlog: Any) -> None:
            box: list[Any] = [None]
            requests = self.wl.requests
            i = 0
            while True:
                due = backlog.get()
                if due is None or meter.stopped:
                    break
                if meter.measuring(due):
                    meter.delays.record(max(0.0, time.time() - due))
                self._one(meter, box, due, requests[i % len(requests)])
                i += 1
            if box[0] is not None:
                box[0].close()

        def _closed_loop(self, meter: WorkerMeter, rng: random.Random) -> None:
            box: list[Any] = [None]
            requests = self.wl.requests
            i = rng.randrange(len(requests))
            while not meter.stopped:
                self._one(meter, box, time.time(), requests[i % len(requests)])
                i += 1
            if box[0] is not None:
                box[0].close()

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

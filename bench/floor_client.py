"""The latency floor for `bench_locust.py --percentiles`: the plainest client a user could write for the same
open-loop measurement. One process, one blocking keep-alive socket, the same request bytes, a blocking timerfd read
until each due time (studio.telemetry.due_timer.ThreadDueTimer), send, read until httptools says the response is
complete; latency from the due time into the same HDR histogram as both studio clients. It keeps up only while one
request finishes before the next is due (a late due time is sent at once and counted from its due time), so it is a
floor at rates well under the server's, not a load generator.

    python bench/floor_client.py HOST PORT RATE SECONDS WARMUP_S REQUESTS_JSON   # prints one JSON line
"""

from __future__ import annotations

import base64
import json
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str]) -> int:
    import httptools

    from studio.telemetry.due_timer import ThreadDueTimer
    from studio.telemetry.histogram import LatencyHistogram

    host, port, rate, seconds, warmup = argv[0], int(argv[1]), float(argv[2]), float(argv[3]), float(argv[4])
    requests = [base64.b64decode(r) for r in json.loads(argv[5])]

    class Done:
        complete = False

        def on_message_complete(self) -> None:
            self.complete = True

    done = Done()
    parser = httptools.HttpResponseParser(done)
    sock = socket.create_connection((host, port), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    timer, hist = ThreadDueTimer(), LatencyHistogram()
    start = time.time() + 0.05
    measure_at, end = start + warmup, start + warmup + seconds
    due, i, errors = start, 0, 0
    try:
        while due < end:
            timer.wait_until(due)
            sock.send(requests[i % len(requests)])
            i += 1
            done.complete = False
            while not done.complete:
                data = sock.recv(65536)
                if not data:
                    raise ConnectionResetError("the server closed the connection")
                parser.feed_data(data)
            t = time.time()
            if parser.get_status_code() != 200:
                errors += 1
            elif due >= measure_at:
                hist.record(t - due)
            due += 1.0 / rate
    finally:
        timer.close()
        sock.close()
    print(json.dumps({"p50": hist.percentile_ms(50) or 0.0, "p90": hist.percentile_ms(90) or 0.0,
                      "p99": hist.percentile_ms(99) or 0.0, "count": hist.count, "errors": errors}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

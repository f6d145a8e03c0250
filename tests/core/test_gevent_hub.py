"""gevent taken up by several threads at once, in a fresh interpreter as at a studio's start with restored
devices: pollers importing tritonclient.http while finishing jobs release their hubs. Before the one-import
rule every client in that process failed in gevent's get_hub ("'NoneType' object is not callable")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import threading
    from studio.core.gevent_hub import release_thread_hub, owns_hub
    from studio.triton.client import TritonClient
    from studio.core.errors import ConnectionFailed

    errors, stop = [], threading.Event()

    def finishing_jobs():  # threads that never used gevent: their release must touch nothing of it
        while not stop.is_set():
            try:
                assert release_thread_hub() is False and not owns_hub()
            except Exception as exc:
                errors.append(repr(exc))
                return

    def poller():
        try:
            with TritonClient("http://127.0.0.1:9", timeout=2) as c:
                c.server_metadata()
        except ConnectionFailed:
            pass
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            release_thread_hub()

    jobs = [threading.Thread(target=finishing_jobs) for _ in range(2)]
    for t in jobs:
        t.start()
    for _ in range(2):  # the first round imports gevent, the second uses what it left
        ps = [threading.Thread(target=poller) for _ in range(3)]
        for t in ps:
            t.start()
        for t in ps:
            t.join()
    stop.set()
    for t in jobs:
        t.join()
    print("errors:", errors)
""")


def test_concurrent_first_use_of_gevent_in_a_fresh_process() -> None:
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "errors: []" in out.stdout, out.stdout[-2000:] + out.stderr[-2000:]
        assert "_closed" not in out.stderr, out.stderr[-2000:]


def test_release_frees_the_hub_of_a_thread_that_used_gevent() -> None:
    import threading

    from studio.core.errors import ConnectionFailed
    from studio.core.gevent_hub import owns_hub, release_thread_hub
    from studio.triton.client import TritonClient

    seen: dict[str, object] = {}

    def work() -> None:
        try:
            with TritonClient("http://127.0.0.1:9", timeout=2) as c:
                c.server_metadata()
        except ConnectionFailed:
            pass
        seen["owned"] = owns_hub()
        seen["freed"] = release_thread_hub()
        seen["again"] = release_thread_hub()

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen == {"owned": True, "freed": True, "again": False}

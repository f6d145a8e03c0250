"""Free the gevent hub a worker thread leaves behind.

tritonclient.http runs on geventhttpclient, and gevent gives every thread that touches it a hub with its own
libev loop (two file descriptors). The hub outlives the thread: the Devices page polls each server on a fresh
thread every two seconds and every GUI job runs on its own thread, so an open studio leaked two descriptors
per poll and hit a desktop's 1024-descriptor limit within the hour ("Too many open files" everywhere).
Worker threads call :func:`release_thread_hub` when they finish. gevent is never imported here.
"""

from __future__ import annotations

import sys
import threading


def release_thread_hub() -> bool:
    """Destroy this (non-main) thread's gevent hub and its loop, if it has one; True when one was freed."""
    if "gevent" not in sys.modules or threading.current_thread() is threading.main_thread():
        return False
    try:
        from gevent._hub_local import get_hub_if_exists
    except ImportError:  # a gevent without it: nothing safe to do
        return False
    hub = get_hub_if_exists()
    if hub is None:
        return False
    hub.destroy(destroy_loop=True)
    return True

"""The one way the studio's threads take up gevent (tritonclient.http) and give its hub back.

tritonclient.http runs on geventhttpclient, and gevent gives every thread that touches it a hub with its own
libev loop (two file descriptors) that outlives the thread: a thread that used it calls
:func:`release_thread_hub` when it finishes, or an open studio leaks two descriptors per poll.

Two rules, both learnt from a restarted studio whose restored devices all read "disconnected (TypeError:
'NoneType' object is not callable)" for good:

- gevent is imported once, under one lock (:func:`import_gevent_client`). Its package import is not safe
  against a second thread importing one of its private modules at the same moment (``gevent._hub_local`` was
  imported by a finishing job while a poll thread was still importing ``tritonclient.http``): the hub class
  then stays ``None`` in that process and every later client fails in ``get_hub``.
- Only a thread that took up gevent through :func:`import_gevent_client` releases a hub, and it never
  imports anything to do so; every other thread's release is a no-op.
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

_IMPORT_LOCK = threading.Lock()
_LOCAL = threading.local()


def import_gevent_client(module: str = "tritonclient.http") -> ModuleType:
    """Import a gevent-based client module under the process-wide lock and mark this thread as a hub owner."""
    mod = sys.modules.get(module)
    if mod is None or getattr(getattr(mod, "__spec__", None), "_initializing", False):
        with _IMPORT_LOCK:
            mod = importlib.import_module(module)
    if threading.current_thread() is not threading.main_thread():
        _LOCAL.owns_hub = True
    return mod


def owns_hub() -> bool:
    """Whether this thread took up gevent (and so may hold a hub to release)."""
    return bool(getattr(_LOCAL, "owns_hub", False))


def release_thread_hub() -> bool:
    """Destroy this (non-main) thread's gevent hub and its loop, if it made one; True when one was freed."""
    if not owns_hub():
        return False
    _LOCAL.owns_hub = False
    hub_local = sys.modules.get("gevent._hub_local")  # fully imported: this thread imported gevent under the lock
    get_hub_if_exists = getattr(hub_local, "get_hub_if_exists", None)
    hub = get_hub_if_exists() if get_hub_if_exists is not None else None
    if hub is None:
        return False
    hub.destroy(destroy_loop=True)
    return True

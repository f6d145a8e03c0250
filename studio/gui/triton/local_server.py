"""The local tritonserver's jobs and its entry in the shared state (no widgets; status lines through
QCoreApplication.translate).

``serve_work`` / ``stop_work`` are the JobRunner functions the page starts (a cancel ends a start-up in
progress through a watcher thread, since ``LocalTritonServer.start`` blocks until the server is ready).
``device_entry`` is how a served server is recorded as a device, so the Devices page polls it and the
Dashboards page targets it (URL and metrics URL) without the user typing either.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication

from studio.core.errors import JobCancelled, StudioError
from studio.core.workspace import DeviceEntry

DEVICE_NAME = "local-triton"


def serve_work(srv: Any, mode: str, done: threading.Event) -> Callable[[Any], Any]:
    """The start-up job for ``srv`` (a LocalTritonServer); ``done`` is set when it ends, however it ends."""

    def work(job: Any) -> Any:
        stop_watch = threading.Event()

        def watch() -> None:  # a cancel (Jobs panel, window close) ends a start-up in progress
            while not stop_watch.wait(0.2):
                if job.cancel_requested:
                    srv.stop(timeout=5)
                    return

        threading.Thread(target=watch, name="triton-serve-cancel", daemon=True).start()
        try:
            job.set_status(QCoreApplication.translate("TritonServer", "starting tritonserver on {url} ({mode} mode)").format(
                url=srv.http_url, mode=mode))
            try:
                srv.start()
            except StudioError:
                if job.cancel_requested:  # the watcher killed it: a cancel, not a failure
                    raise JobCancelled("server start cancelled") from None
                raise
            if job.cancel_requested:
                srv.stop(timeout=5)
                raise JobCancelled("server start cancelled")
            return srv
        finally:
            stop_watch.set()
            done.set()

    return work


def stop_work(srv: Any) -> Callable[[Any], Any]:
    """The stop job: SIGTERM, then SIGKILL of the server's process group; its temp folder is removed."""

    def work(job: Any) -> Any:
        job.set_status(QCoreApplication.translate("TritonServer", "stopping tritonserver"))
        rc = srv.stop()
        srv.cleanup()
        return rc

    return work


def served_models(srv: Any) -> list[str]:
    """The models the server loads: the explicit list, else (poll mode) every model of its repository."""
    from studio.triton.repo_files import repo_models

    return list(srv.load_models) or repo_models(srv.source_repo)


def device_entry(srv: Any, name: str = DEVICE_NAME) -> DeviceEntry:
    """The running server as a device: HTTP URL, and in ``extra`` its metrics URL (Triton's metrics port is not
    its HTTP port, so nobody could guess it), that it is local, its process id and the repository it serves."""
    pid = srv.proc.pid if getattr(srv, "proc", None) is not None else None
    return DeviceEntry(name=name, url=srv.http_url, kind="triton", protocol="http",
                       extra={"metrics_url": srv.metrics_url, "grpc_url": srv.grpc_url, "local": True, "pid": pid,
                              "repo": str(srv.source_repo)})

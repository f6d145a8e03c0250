"""``POST /agent/bundles``: stream a bundle into ``DATA/incoming`` under the size cap and the disk's room, then
hand it to :meth:`AgentCore.install_upload`. Whatever goes wrong (oversize, client gone, disk full), nothing of
the upload is left behind and the active version keeps serving."""

from __future__ import annotations

import logging
import os

from fastapi import Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from studio.agent.core import AgentCore
from studio.agent.disk_space import check_upload, from_os_error, is_no_space, mb
from studio.agent.metrics import AgentMetrics
from studio.agent.responses import error_response, studio_error_response
from studio.core.errors import StorageError, StudioError

log = logging.getLogger("studio.agent")


def _no_space(metrics: AgentMetrics, exc: StorageError) -> JSONResponse:
    metrics.deploys.labels("no_space").inc()
    log.warning("upload refused: %s", exc.message)
    return studio_error_response(exc)


async def receive_upload(request: Request, core: AgentCore, metrics: AgentMetrics) -> JSONResponse:
    cap = core.config.max_upload_bytes
    header = request.headers.get("content-length")
    declared = int(header) if header and header.isdigit() else None
    if declared is not None and declared > cap:
        metrics.deploys.labels("too_large").inc()
        return error_response(413, f"bundle of {declared} bytes exceeds this agent's upload limit of {cap} bytes",
                              kind="bundle", hint="start the agent with a larger --max-upload-mb")
    if declared is not None:
        try:
            check_upload(core.store.root, declared)  # before a byte is written
        except StorageError as exc:
            core.events["no_space"] += 1
            return _no_space(metrics, exc)
    part = core.store.new_upload_path()
    size, complete = 0, False
    failed: OSError | None = None
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            async for chunk in request.stream():
                size += len(chunk)
                if size > cap:
                    metrics.deploys.labels("too_large").inc()
                    return error_response(413, f"bundle exceeds this agent's upload limit of {cap} bytes",
                                          kind="bundle", hint="start the agent with a larger --max-upload-mb")
                f.write(chunk)
        complete = True
    except ClientDisconnect:
        metrics.deploys.labels("interrupted").inc()
        return error_response(400, "upload interrupted")
    except OSError as exc:  # the write (or the close's flush) ran out of room
        if not is_no_space(exc):
            raise
        failed = exc
    finally:
        if not complete:  # oversize, client gone, disk full, or cancelled: leave nothing behind
            part.unlink(missing_ok=True)
    if failed is not None:  # answered once the partial file is gone, so the free space it names is true
        core.events["no_space"] += 1
        return _no_space(metrics, from_os_error(failed, core.store.root, f"receiving the upload ({mb(size)} in)"))
    try:
        result = await run_in_threadpool(core.install_upload, part)
    except StorageError as exc:
        return _no_space(metrics, exc)
    except StudioError as exc:
        metrics.deploys.labels("rejected").inc()
        return studio_error_response(exc)
    finally:
        part.unlink(missing_ok=True)
    metrics.deploys.labels("activated").inc()
    return JSONResponse(result)

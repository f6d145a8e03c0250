"""The agent's JSON error answers (``{"error": ..., "kind", "offending", "hint", "details"}``), one status per
StudioError class."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from studio.agent.core import Conflict
from studio.agent.trust import TrustPushRefused
from studio.core.errors import BundleError, InputError, ModelError, StorageError, StudioError

_STATUS = {TrustPushRefused: 403, InputError: 400, Conflict: 409, BundleError: 422, ModelError: 422,
           StorageError: 507}  # 507 Insufficient Storage: the data folder's disk is full


def error_response(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **{k: v for k, v in extra.items() if v is not None}}, status_code=status)


def studio_error_response(exc: StudioError) -> JSONResponse:
    status = next((s for cls, s in _STATUS.items() if isinstance(exc, cls)), 500)
    return error_response(status, exc.message, kind=exc.kind, offending=exc.offending, hint=exc.hint,
                          details=exc.details or None)

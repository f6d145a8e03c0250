"""Room on the agent's data folder for an upload, and a clean error when a write runs out of it.

An upload needs its own bytes in ``DATA/incoming`` and, while it is verified, an extracted copy of about the
same size (the upload file is deleted once extracted), plus a little for ``state.json``. A declared
Content-Length is compared with that before one byte is written (507 Insufficient Storage); a write that still
fails (a chunked upload of unknown size, a compressed bundle that extracts larger, another process filling the
disk, a quota, the process's file-size limit) becomes the same 507, and what it had written is removed.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import StorageError

NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
RESERVE_BYTES = 1 << 20  # state.json and its history, written after the install
HINT = ("free space on the board (remove files from that disk, or lower the agent's --keep-versions), or run "
        "the agent with --data on a larger disk; the active version keeps serving")


def mb(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:.1f} MB"


@dataclass(frozen=True)
class Room:
    """Free and total bytes of the data folder's filesystem, and this process's file-size limit (None: none)."""

    data: Path
    free_bytes: int
    total_bytes: int
    file_size_limit: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"data": str(self.data), "free_bytes": self.free_bytes, "total_bytes": self.total_bytes,
                "file_size_limit": self.file_size_limit}


def file_size_limit() -> int | None:
    """RLIMIT_FSIZE's soft limit (``ulimit -f``, systemd's LimitFSIZE=): writes past it fail with EFBIG."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def room(data: Path) -> Room:
    usage = shutil.disk_usage(data)
    return Room(data, int(usage.free), int(usage.total), file_size_limit())


def needed_for(upload_bytes: int) -> int:
    """The upload, its extracted copy and the reserve."""
    return 2 * upload_bytes + RESERVE_BYTES


def check_upload(data: Path, upload_bytes: int) -> Room:
    """Raise StorageError when a bundle of ``upload_bytes`` cannot fit; else the room there is."""
    r = room(data)
    need = needed_for(upload_bytes)
    details = {**r.to_dict(), "needed_bytes": need, "upload_bytes": upload_bytes}
    if r.file_size_limit is not None and upload_bytes > r.file_size_limit:
        raise StorageError(f"the agent may not write files over {mb(r.file_size_limit)} in its data folder "
                           f"{data} (its file-size limit, RLIMIT_FSIZE / `ulimit -f`) and this bundle is "
                           f"{mb(upload_bytes)}",
                           offending=str(data), details=details,
                           hint="raise the agent's file-size limit (`ulimit -f unlimited`, or LimitFSIZE=infinity "
                                "in its systemd unit); the active version keeps serving")
    if need > r.free_bytes:
        raise StorageError(f"not enough free space in the agent's data folder {data} for a bundle of "
                           f"{mb(upload_bytes)}: {mb(need)} needed (the upload, its extracted copy and {mb(RESERVE_BYTES)} "
                           f"spare), {mb(r.free_bytes)} free of {mb(r.total_bytes)}",
                           offending=str(data), details=details, hint=HINT)
    return r


def is_no_space(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in NO_SPACE_ERRNOS


def from_os_error(exc: OSError, data: Path, stage: str) -> StorageError:
    """The StorageError for a write that failed with ENOSPC / EDQUOT / EFBIG while ``stage``."""
    r = room(data)
    details = {**r.to_dict(), "errno": errno.errorcode.get(exc.errno or 0, str(exc.errno))}
    if exc.errno == errno.EFBIG:
        return StorageError(f"the agent hit its file-size limit of {mb(r.file_size_limit)} (RLIMIT_FSIZE / "
                            f"`ulimit -f`) in its data folder {data} while {stage}: {exc.strerror}; the partial "
                            "files were removed",
                            offending=str(data), details=details,
                            hint="raise the agent's file-size limit (`ulimit -f unlimited`, or LimitFSIZE=infinity "
                                 "in its systemd unit); the active version keeps serving")
    return StorageError(f"the agent's data folder {data} ran out of space while {stage}: {exc.strerror}; the "
                        f"partial files were removed, {mb(r.free_bytes)} free of {mb(r.total_bytes)}",
                        offending=str(data), details=details, hint=HINT)


@contextlib.contextmanager
def storage_errors(data: Path, stage: str) -> Iterator[None]:
    """Turn an out-of-space OSError raised inside into a StorageError (others pass through)."""
    try:
        yield
    except OSError as exc:
        if not is_no_space(exc):
            raise
        raise from_os_error(exc, data, stage) from None

"""One studio window per workspace: the first `studio gui` on a workspace holds a lock for its life and listens
on a local socket (studio.gui.instance_server, a QLocalServer); a later launch on the same workspace finds the
lock taken, hands its paths to the first over that socket and exits, without starting Qt.

The lock (``fcntl.flock`` on ``KEY.lock``) is what decides who is first: the kernel drops it when the process
dies, so a crashed studio never blocks the next one, and the socket file it left is removed by the next first
instance. Both live in ``$XDG_RUNTIME_DIR/deployment-studio`` (else ``/tmp/deployment-studio-UID``, mode 0700,
refused when another user owns it); ``KEY`` is a hash of the workspace's resolved path. The protocol is one
JSON line each way: ``{"open": [OpenRequest...], "from_pid": N}`` -> ``{"ok": true, "pid": N, "opened":
[...]}``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from studio.core.errors import ConnectionFailed, InputError

MAX_REPLY = 1 << 20


def runtime_dir() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR")
    d = Path(base) / "deployment-studio" if base else Path("/tmp") / f"deployment-studio-{os.getuid()}"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = d.lstat()
    if st.st_uid != os.getuid() or not stat.S_ISDIR(st.st_mode):
        raise InputError(f"{d} belongs to another user; the studio will not put its socket there", offending=str(d),
                         hint="set XDG_RUNTIME_DIR to a folder of your own")
    return d


def instance_key(workspace: Path | str) -> str:
    return hashlib.sha256(str(Path(workspace).expanduser().resolve()).encode()).hexdigest()[:16]


@dataclass
class Instance:
    """The lock of the first studio on a workspace, held while this object (and its fd) lives."""

    workspace: str
    lock_path: Path
    socket_path: Path
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            try:
                self.socket_path.unlink(missing_ok=True)
            finally:
                os.close(self.fd)
                self.fd = -1


def paths_for(workspace: Path | str) -> tuple[Path, Path]:
    key = instance_key(workspace)
    d = runtime_dir()
    return d / f"{key}.lock", d / f"{key}.sock"


def claim(workspace: Path | str) -> Instance | None:
    """The lock for ``workspace`` when no studio holds it (this process is the first), else None."""
    lock, sock = paths_for(workspace)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return Instance(str(workspace), lock, sock, fd)


def holder_pid(workspace: Path | str) -> int | None:
    try:
        return int(paths_for(workspace)[0].read_text().strip())
    except (OSError, ValueError):
        return None


def hand_off(workspace: Path | str, requests: list[Any], timeout: float = 60.0) -> dict[str, Any]:
    """Send ``requests`` (OpenRequests) to the studio holding ``workspace``'s lock and return its answer.

    The first studio may still be starting (its window, then its server): connecting is retried until
    ``timeout``; a studio that stops answering is a ConnectionFailed naming its pid."""
    _, sock_path = paths_for(workspace)
    msg = json.dumps({"open": [r.to_dict() for r in requests], "from_pid": os.getpid()}).encode() + b"\n"
    deadline = time.monotonic() + timeout
    last: OSError | None = None
    while time.monotonic() < deadline:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(max(1.0, deadline - time.monotonic()))
        try:
            s.connect(str(sock_path))
            s.sendall(msg)
            data = b""
            while not data.endswith(b"\n") and len(data) < MAX_REPLY:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            return json.loads(data.decode() or "{}")
        except (FileNotFoundError, ConnectionRefusedError) as exc:  # its server is not listening yet
            last = exc
            time.sleep(0.1)
        except (OSError, ValueError) as exc:
            last = exc if isinstance(exc, OSError) else OSError(str(exc))
            break
        finally:
            s.close()
    pid = holder_pid(workspace)
    raise ConnectionFailed(f"the studio already open on {workspace} (pid {pid}) did not take the paths: {last}",
                           offending=str(sock_path),
                           hint="wait until its window is up and try again, or start a separate window with "
                                "`studio gui --new-instance`")

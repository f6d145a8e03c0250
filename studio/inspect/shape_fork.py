"""ONNX shape inference in a forked child, so the inspector's own start-up runs beside it.

``onnx.shape_inference.infer_shapes`` is C++ that holds the GIL for most of its run (a second thread gets about a
quarter of a core), and on a large model it is a third of what the inspector waits for after ``import onnx``.
The CLI forks as soon as it knows the file: the child loads only onnx's C++ extension (6-8 ms, no numpy, no
``onnx`` package init), reads the file, infers and leaves the inferred model's bytes in a memfd, while the parent
imports onnx and the studio, loads the target profiles and indexes the nodes. The parent then parses those bytes,
as ``infer_shapes`` itself does with its C++ result (the bytes are the same: the C++ parses the file as written).

Used only where a fork is safe and pays: Linux (``os.memfd_create``), one thread alive in the process (the CLI;
the GUI's job threads never fork), and ``STUDIO_SHAPE_FORK`` not ``0``. The answer is used only for the file the
parent reads (size, mtime and inode as the child saw them); a child that could not start is ignored (the parent
infers in process), one that dies inside onnx becomes a shape-inference error like any other (in process, a crash
there would have ended the whole command).
"""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path

_OK, _FAILED, _NO_START = 0, 3, 4  # child exit codes: inferred model / inference error text / not started
_pending: dict[str, PendingInference] = {}  # prefetched by the CLI, taken by the inspector


@dataclass
class PendingInference:
    """A running child for ``path``; ``inferred`` waits for it once."""

    path: str
    pid: int
    fd: int
    _answer: tuple[str, bytes | None, str | None] | None = field(default=None, repr=False)

    def _wait(self) -> tuple[str, bytes | None, str | None]:
        if self._answer is None:
            try:
                _, status = os.waitpid(self.pid, 0)
            except ChildProcessError:  # reaped by someone else's waitpid(-1): its exit status is lost
                os.close(self.fd)
                self._answer = ("", None, None)
                return self._answer
            try:
                data = _read_all(self.fd)
            finally:
                os.close(self.fd)
            stamp, _, body = data.partition(b"\n")
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            if code == _OK:
                self._answer = (stamp.decode(), body, None)
            elif code == _FAILED:
                self._answer = (stamp.decode(), None, body.decode("utf-8", "replace"))
            elif os.WIFSIGNALED(status) and os.WTERMSIG(status) != signal.SIGKILL:
                name = signal.Signals(os.WTERMSIG(status)).name
                self._answer = (stamp.decode(), None, f"shape inference crashed inside onnx ({name})")
            else:  # not started, or killed (cancel, the OOM killer): the caller infers in process
                self._answer = ("", None, None)
        return self._answer

    def wait(self) -> PendingInference:
        """Wait until the child has answered (``inferred`` waits by itself)."""
        self._wait()
        return self

    def inferred(self, path: Path | str) -> tuple[bytes | None, str | None] | None:
        """(inferred model bytes, None), (None, error text worded as in process), or None when the child has no
        answer for the file as it is now (changed since, or the child could not start): infer in process."""
        stamp, data, error = self._wait()
        if not stamp or stamp != _stamp_of(Path(path)):
            return None
        return data, error

    def cancel(self) -> None:
        """Stop the child and reap it (the caller failed before it needed the answer)."""
        if self._answer is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._wait()


def _stamp_of(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "?"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _read_all(fd: int) -> bytes:
    size = os.fstat(fd).st_size
    os.lseek(fd, 0, os.SEEK_SET)
    chunks, left = [], size
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def enabled() -> bool:
    """Whether a fork is safe here (Linux memfd, a single thread, not switched off). "Single" counts the OS's
    threads: Python's ``threading.active_count()`` does not see threads it did not start (a QThread running the
    GUI's inspect job, ONNX Runtime's pools), and a fork beside one of them can inherit a lock it holds: the child
    hung inside onnx, and the job with it, in about one GUI inspection of two under load."""
    return (hasattr(os, "memfd_create") and hasattr(os, "fork") and os.environ.get("STUDIO_SHAPE_FORK") != "0"
            and threading.current_thread() is threading.main_thread() and threading.active_count() == 1
            and _os_threads() == 1)


def _os_threads() -> int:
    """Threads of this process as the kernel counts them (/proc/self/status), 0 when unknown."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def prefetch(path: Path | str) -> None:
    """Start inferring ``path`` now, for a later ``take`` (the CLI calls this before its heavy imports)."""
    key = str(Path(path).absolute())
    if key not in _pending:
        pending = start(path)
        if pending is not None:
            _pending[key] = pending


def take(path: Path | str) -> PendingInference | None:
    """The prefetched child for ``path`` (the caller now owns it), else None."""
    return _pending.pop(str(Path(path).absolute()), None)


def cancel_prefetched() -> None:
    """Stop and reap every prefetched child nobody took (the command failed before inspecting)."""
    while _pending:
        _pending.popitem()[1].cancel()


def start(path: Path | str) -> PendingInference | None:
    """Fork a child inferring the shapes of the ONNX file ``path``, or None where that is not safe. The child never
    returns into the parent's code: it ends with ``os._exit``."""
    if not enabled():
        return None
    fd = os.memfd_create("studio-shapes", os.MFD_CLOEXEC)
    try:
        pid = os.fork()
    except OSError:
        os.close(fd)
        return None
    if pid == 0:  # the child: no atexit handlers, no flushing of the parent's buffers
        os._exit(_child(str(path), fd))
    return PendingInference(str(path), pid, fd)


def _child(path: str, fd: int) -> int:
    from studio.core.onnx_light import cpp, infer_shapes

    try:
        cpp()  # only onnx's extension module: no numpy, no onnx package
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
        stamp = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}\n".encode()
    except BaseException:  # noqa: BLE001 - the parent reads the file itself and says what is wrong
        return _NO_START
    try:
        out = infer_shapes(data)  # the same call analyse_structure makes in process
    except BaseException as exc:  # noqa: BLE001 - reported as the in-process path words it
        _write_all(fd, stamp + f"{type(exc).__name__}: {str(exc)[:300]}".encode())
        return _FAILED
    try:
        _write_all(fd, stamp + out)
    except BaseException:  # noqa: BLE001 - a full memory: the parent infers in process
        return _NO_START
    return _OK

"""The first studio's end of the single-instance socket (studio.desktop.instance): a QLocalServer on the
workspace's socket path; each connection sends one JSON line of paths to open, gets one line back saying what
each page shows now, and the window comes to the front. Runs on the GUI thread's event loop."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from studio.desktop.instance import MAX_REPLY, Instance
from studio.desktop.open_paths import OpenRequest


def open_requests(win: Any, requests: list[OpenRequest]) -> list[dict[str, Any]]:
    """Open each path on its page (the window's ``open_page``) and say what the page shows afterwards."""
    out = []
    for r in requests:
        _make_current(win, Path(r.path))
        ok = win.open_page(r.page, r.path)
        page = win.page(r.page)
        out.append({**r.to_dict(), "opened": bool(ok), "shows": page.opened_path() if page is not None else None})
    current = win.current_page()
    for item in out:
        item["current_page"] = current.page_id if current is not None else None
    return out


def _make_current(win: Any, path: Path) -> None:
    """An opened model becomes the workspace's current model (registered under a name of its own), so the
    toolbar, Compile, Package and Diff follow the file on screen rather than the model chosen before."""
    from studio.core.errors import StudioError
    from studio.core.workspace import detect_model_kind

    if getattr(win, "workspace", None) is None:
        return
    try:
        detect_model_kind(path)  # a folder the workspace cannot register (ONNX only under onnx/) just opens
    except StudioError:
        return
    win.add_model_paths([path])


class InstanceServer(QObject):
    """Answers for the workspace the window shows: when the window switches workspace, the lock and socket
    move with it (unless another studio holds the new one: then this one keeps answering for the old)."""

    def __init__(self, win: Any, instance: Instance) -> None:
        super().__init__(win)
        self.win, self.instance = win, instance
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}
        self._listen()
        win.sig_workspace_changed.connect(self._workspace_changed)
        self._workspace_changed(win.workspace)  # build_window may have opened another one than was asked

    def _listen(self) -> None:
        QLocalServer.removeServer(str(self.instance.socket_path))  # a crashed studio's socket: we hold the lock
        if not self.server.listen(str(self.instance.socket_path)):
            raise OSError(f"cannot listen on {self.instance.socket_path}: {self.server.errorString()}")

    def _workspace_changed(self, workspace: Any) -> None:
        from studio.desktop.instance import claim, instance_key

        if workspace is None or instance_key(workspace.root) == instance_key(self.instance.workspace):
            return
        new = claim(workspace.root)
        if new is None:
            self.win.log_panel.append_log(f"another studio is open on {workspace.root}; launches for it go there, "
                                          f"this window keeps answering for {self.instance.workspace}",
                                          source="studio")
            return
        self.server.close()
        self.instance.release()
        self.instance = new
        self._listen()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            conn = self.server.nextPendingConnection()
            self._buffers[conn] = b""
            conn.readyRead.connect(lambda c=conn: self._read(c))
            conn.disconnected.connect(lambda c=conn: self._forget(c))

    def _forget(self, conn: QLocalSocket) -> None:
        self._buffers.pop(conn, None)
        conn.deleteLater()

    def _read(self, conn: QLocalSocket) -> None:
        data = self._buffers.get(conn, b"") + bytes(conn.readAll().data())
        if b"\n" not in data and len(data) < MAX_REPLY:
            self._buffers[conn] = data
            return
        self._buffers[conn] = b""
        reply = self._handle(data.split(b"\n", 1)[0])
        conn.write(json.dumps(reply).encode() + b"\n")
        conn.flush()
        conn.disconnectFromServer()

    def _handle(self, line: bytes) -> dict[str, Any]:
        try:
            msg = json.loads(line.decode())
            requests = [OpenRequest(str(r["path"]), str(r["page"]), str(r.get("what", ""))) for r in msg.get("open", [])]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return {"ok": False, "pid": os.getpid(), "error": f"bad request: {exc}"}
        opened = open_requests(self.win, requests)
        self.raise_window()
        said = QCoreApplication.translate("MainWindow", "opened from another launch (pid {pid}): {paths}")
        self.win.log_panel.append_log(said.format(pid=msg.get("from_pid"), paths=", ".join(r.path for r in requests)
                                                  or QCoreApplication.translate("MainWindow", "nothing")),
                                      source="studio")
        return {"ok": True, "pid": os.getpid(), "workspace": self.instance.workspace, "opened": opened}

    def raise_window(self) -> None:
        w = self.win
        if w.isMinimized():
            w.showNormal()
        w.show()
        w.raise_()
        w.activateWindow()

    def close(self) -> None:
        self.server.close()
        self.instance.release()

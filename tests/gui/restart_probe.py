"""A studio started in a fresh process on a saved workspace (as after quitting and reopening it): prints, as
JSON, each device's Devices row and shared state once every device has been polled ``rounds`` times, then
quits through the window's own close. Run by tests/gui/test_device_polling.py.

    python -m tests.gui.restart_probe WORKSPACE [ROUNDS]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    ws, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication

    from studio.gui import gc_guard
    from studio.gui.app import build_window
    from studio.gui.main_window import APPLICATION, ORGANIZATION

    app = QApplication(sys.argv[:1])
    gc_guard.install(app)
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    win = build_window(argparse.Namespace(demo=None, workspace=ws, theme=None))
    win.show()
    devices = win.page("devices")
    devices.timer.setInterval(300)
    seen: dict[str, list[float]] = {}
    deadline = time.monotonic() + 90

    def rows() -> dict[str, str]:
        out = {}
        for i in range(devices.server_list.count()):
            item = devices.server_list.item(i)
            out[item.data(Qt.ItemDataRole.UserRole)] = item.text().split("\n")[0]
        return out

    def tick() -> None:
        for name, snap in devices.snapshots.items():
            ats = seen.setdefault(name, [])
            if not ats or ats[-1] != snap.at:
                ats.append(snap.at)
        names = [d.name for d in win.state.devices()]
        if all(len(seen.get(n, [])) >= rounds for n in names) or time.monotonic() > deadline:
            print(json.dumps({"rows": rows(), "states": {n: win.state.device_state(n).state for n in names},
                              "toolbar": win.devices_label.text(),
                              "polls": {n: len(seen.get(n, [])) for n in names}}), flush=True)
            win.close()
            app.quit()

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(100)
    return int(app.exec())


if __name__ == "__main__":
    raise SystemExit(main())

"""The main window's workspace actions: open, create, the demo, adding models (menus, dialogs, drag and drop).

A mixin of :class:`studio.gui.main_window.MainWindow` (it uses the window's ``workspace``, ``jobs``,
``set_workspace``, ``add_problem``, ``report_error``, ``refresh_*``, ``flash`` and ``log_panel``); kept apart so
the window module stays the wiring of its parts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog

from studio.core.errors import InputError, Problem, StudioError
from studio.core.workspace import Workspace, WorkspaceCorrupt
from studio.gui.file_dialogs import start_dir
from studio.gui.jobs_qt import JobHandle

translate = QCoreApplication.translate


class WorkspaceActions:
    workspace: Workspace | None
    jobs: Any
    log_panel: Any

    def open_workspace(self, path: Path | str) -> Workspace | None:
        """Open an existing workspace folder; a bad folder becomes a Problem, not a crash."""
        try:
            ws = Workspace.open(path)
        except WorkspaceCorrupt as exc:  # the studio still opens: keep the bad file, start from the models there
            ws, backup = Workspace.recover(path)
            self.add_problem(Problem("warning", translate(
                "WorkspaceActions", "{error}. Kept it as {backup} and started a new workspace file with the {n} "
                                    "model(s) found in models/").format(error=exc.message, backup=backup.name,
                                                                         n=len(ws.models)),
                                     source="workspace", location=str(backup),
                                     hint=translate("WorkspaceActions", "devices and artifacts from the old file are "
                                                                        "in the backup")))
        except StudioError as exc:
            self.report_error(exc, source="workspace")
            self.refresh_workspaces()
            return None
        self.set_workspace(ws)
        self.flash(translate("WorkspaceActions", "opened workspace {root}").format(root=ws.root), 5000)
        return ws

    def create_workspace(self, path: Path | str) -> Workspace | None:
        try:
            ws = Workspace.create(path)
        except StudioError as exc:
            self.report_error(exc, source="workspace")
            return None
        self.set_workspace(ws)
        return ws

    def start_demo(self, root: Path | str) -> JobHandle | None:
        """Open the demo workspace at once and fill it with the sample models as a job."""
        from studio.export.demo import create_demo_workspace

        root = Path(root)
        ws = self.create_workspace(root)
        if ws is None:
            return None
        ws.name = "demo"
        ws.save()
        self.set_workspace(ws)

        def done(result: Workspace) -> None:
            keep_model = self.workspace.current_model if self.workspace is not None else None
            if keep_model and result.model(keep_model) is not None:
                result.current_model = keep_model
            self.set_workspace(result)

        return self.jobs.start("demo", translate("WorkspaceActions", "Preparing demo workspace"),
                               lambda job: create_demo_workspace(root, job), on_done=done)

    def new_workspace_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, translate("WorkspaceActions", "New workspace: choose an empty folder"),
                                                start_dir(None, None))
        if path:
            self.create_workspace(path)

    def open_workspace_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, translate("WorkspaceActions", "Open workspace folder"), start_dir(None, None))
        if path:
            self.open_workspace(path)

    def add_model_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, translate("WorkspaceActions", "Add a HuggingFace model folder or ONNX export folder"),
                                                start_dir(None, self.workspace, "models"))
        if path:
            self.add_model_paths([Path(path)])

    def add_onnx_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, translate("WorkspaceActions", "Add an ONNX model"), start_dir(None, self.workspace, "models"),
                                              translate("WorkspaceActions", "ONNX models (*.onnx)"))
        if path:
            self.add_model_paths([Path(path)])

    def add_model_paths(self, paths: list[Path]) -> list[str]:
        """Register dropped or chosen model folders / .onnx files and select the last one added."""
        if self.workspace is None:
            self.report_error(InputError(translate("WorkspaceActions", "no workspace is open to add models to"),
                                         hint=translate("WorkspaceActions", "open or create a workspace first (File > "
                                                                            "New workspace)")),
                              source="add model")
            return []
        added: list[str] = []
        for p in paths:
            name = self.workspace.name_for(p)
            known = self.workspace.model(name)
            if known is not None:  # the same path again: made current, its provenance and report kept
                self.workspace.current_model = name
                self.workspace.save()
                added.append(name)
                self.log_panel.append_log(f"selected model {name} ({known.kind}) from {p}", source="workspace")
                continue
            try:
                entry = self.workspace.add_model(Path(p), name=name, make_current=True)
            except StudioError as exc:
                self.report_error(exc, source="add model")
                continue
            added.append(entry.name)
            self.log_panel.append_log(translate("WorkspaceActions", "added model {name} ({kind}) from {path}").format(
                name=entry.name, kind=entry.kind, path=p), source="workspace")
        if added:
            self.refresh_models()
            self._propagate()
            self.flash(translate("WorkspaceActions", "added {join}").format(join=', '.join(added)), 5000)
        return added

    @staticmethod
    def _droppable(event: QDragEnterEvent | QDropEvent) -> list[Path]:
        md = event.mimeData()
        if not md.hasUrls():
            return []
        paths = [Path(u.toLocalFile()) for u in md.urls() if u.isLocalFile()]
        return [p for p in paths if p.is_dir() or p.suffix.lower() == ".onnx"]

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if self._droppable(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802,ANN001
        event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        paths = self._droppable(event)
        if paths:
            event.acceptProposedAction()
            self.add_model_paths(paths)
        else:
            event.ignore()


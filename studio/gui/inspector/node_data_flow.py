"""Model Explorer node data in the inspector: export the page's overlays, or colour the graph by a file.

The format and the node ids are studio.inspect.node_data's (the same files `studio inspect --node-data`
writes): exporting writes every target's verdicts; loading a file with numbers colours the graph by them
(the heat mode, with the file's name on the legend), a file of verdict words colours nodes as verdicts, and
anything else is an in-place error naming the file. Work runs as jobs; the page only shows results.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QFileDialog

from studio.core.errors import InputError
from studio.gui.file_dialogs import start_dir
from studio.gui.graph import palette

translate = QCoreApplication.translate

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage


def read_overlay(path: Path, model: Path, job: Any) -> Any:
    from studio.inspect.api import load_structure
    from studio.inspect.node_data import read_node_data

    job.set_status(translate("NodeDataFlow", "reading {name}").format(name=path.name))
    return read_node_data(path, load_structure(model))


class NodeDataFlow:
    def __init__(self, page: InspectPage) -> None:
        self.page = page
        self.last_overlay: Any | None = None

    def choose_and_load(self) -> None:
        page = self.page
        path, _ = QFileDialog.getOpenFileName(page, translate("NodeDataFlow", "Model Explorer node data"), start_dir(page.model_path,
                                              page.workspace, "reports"), translate("NodeDataFlow", "Node data (*.json);;All files (*)"))
        if path:
            self.load(Path(path))

    def load(self, path: Path) -> None:
        page = self.page
        if page.model_path is None:
            page._show_error(InputError(translate("NodeDataFlow", "open a model first"), offending=str(path),
                                        hint=translate("NodeDataFlow", "node data colours the nodes of the model "
                                                                       "shown")))
            return
        model = page.model_path
        page.jobs.start("inspect.node_data", translate("NodeDataFlow", "node data {name}").format(name=path.name), lambda job: read_overlay(path, model, job),
                        on_done=self._show, on_failed=page.job_failed)

    def _show(self, overlay: Any) -> None:
        page = self.page
        self.last_overlay = overlay
        values = overlay.values
        numbers = {k: float(v) for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        words = {k: str(v) for k, v in values.items() if isinstance(v, str)}
        note = (translate("NodeDataFlow", " ({n} ids name no node of this model)").format(n=len(overlay.unknown))
                if overlay.unknown else "")
        if numbers:
            page.set_heat(numbers, overlay.name)
        elif words and set(words.values()) <= set(palette.VERDICTS):
            page.view.set_verdicts(words)
        else:
            page._show_error(InputError(translate("NodeDataFlow", "the node data holds no numbers and no verdict "
                                                                  "words to colour by"),
                                        offending=overlay.name,
                                        hint=translate("NodeDataFlow", "load a file written by `studio inspect "
                                                                       "--node-data` or one with numeric values")))
            return
        page.sig_log.emit(translate("NodeDataFlow", "node data '{name}': {n} nodes coloured").format(
            name=overlay.name, n=len(values)) + note)

    def choose_and_export(self) -> None:
        page = self.page
        if page.report is None or page.model_path is None:
            page._show_error(InputError(translate("NodeDataFlow", "nothing to export yet: the model is not inspected"),
                                        hint=translate("NodeDataFlow", "wait for the inspection to finish")))
            return
        default = page.model_path.with_suffix(".node_data.json").name
        path, _ = QFileDialog.getSaveFileName(page, translate("NodeDataFlow", "Export overlays as Model Explorer node data"),
                                              start_dir(page.model_path, page.workspace, "reports", default),
                                              translate("NodeDataFlow", "Node data (*.json)"))
        if path:
            self.export(Path(path))

    def export(self, out: Path) -> None:
        from studio.inspect.node_data import export_overlays

        page = self.page
        report, model = page.report, page.model_path
        page.jobs.start("inspect.node_data", translate("NodeDataFlow", "export node data {name}").format(name=out.name),
                        lambda job: export_overlays(report, model, out),
                        on_done=lambda files: page.sig_log.emit(
                            translate("NodeDataFlow", "wrote node data: {files}").format(
                                files=", ".join(str(f) for f in files))),
                        on_failed=page.job_failed)


__all__ = ["NodeDataFlow", "read_overlay"]

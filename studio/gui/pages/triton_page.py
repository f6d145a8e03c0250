"""Triton page: an ONNX model (or split export) -> a checked model repository -> a local tritonserver.

Every step is a core call run as a job (studio.triton.repo_builder.build_repo, repo_check.check_repo,
server.LocalTritonServer): the page collects BuildOptions, shows the config.pbtxt the builder wrote and the
repository's files, lists check findings (a click marks the file and field), and starts / stops the local
CPU server off the GUI thread. A served server is a device of the shared state (``local-triton``), so the
Devices page polls it and the Dashboards target it; "Open in Devices" selects it there.

The widgets live in studio.gui.triton (repo_form, repo_tree, check_panel, server_panel); this module wires
them to jobs and the state, and keeps their widgets reachable as the page's attributes.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from studio.core.errors import JobCancelled, Problem, StudioError
from studio.gui.page import Page
from studio.gui.triton.check_panel import CheckPanel, finding_location
from studio.gui.triton.local_server import DEVICE_NAME, device_entry, serve_work, served_models, stop_work
from studio.gui.triton.repo_form import RepoForm, existing_versions, model_name_for
from studio.gui.triton.repo_tree import RepoTree
from studio.gui.triton.server_panel import ServerPanel

LOG_LINES = 400

__all__ = ["DEVICE_NAME", "TritonPage", "existing_versions", "finding_location", "model_name_for"]


class TritonPage(Page):
    page_id = "triton"
    title = "Triton"
    scrolls_itself = True  # splitters share the height; the page fits 1280x720 as it is
    icon_name = "triton"

    def __init__(self, jobs: Any = None, parent: QWidget | None = None) -> None:
        super().__init__(jobs, parent)
        self.build_report: Any = None  # studio.triton.repo_builder.BuildReport
        self.server: Any = None  # studio.triton.server.LocalTritonServer
        self.server_state = "stopped"  # stopped | starting | running | stopping | exited | failed
        self._serve_done = threading.Event()
        self._serve_done.set()
        self._serve_handle: Any = None
        self._recorded: Any = None  # the server last recorded in the shared state as DEVICE_NAME
        self._shut = False
        self._build()
        self.log_timer = QTimer(self)
        self.log_timer.setInterval(1000)
        self.log_timer.timeout.connect(self._refresh_server)
        self.jobs.sig_progress.connect(self._on_progress)
        self.jobs.sig_status.connect(self._on_status)

    # -- layout ----------------------------------------------------------------------------------------
    def _build(self) -> None:
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 8)
        split = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(split)

        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(340)
        self.form = RepoForm()
        scroll.setWidget(self.form)
        self.form.build_btn.clicked.connect(self.build)
        self.form.check_btn.clicked.connect(self.check)
        split.addWidget(scroll)

        self.repo_tree = RepoTree(lambda: self.repo_edit.text())
        self.check_panel = CheckPanel()
        self.check_panel.sig_finding.connect(self._finding_selected)
        self.server_panel = ServerPanel()
        self.server_panel.serve_btn.clicked.connect(self.serve)
        self.server_panel.stop_btn.clicked.connect(self.stop_server)
        self.server_panel.devices_btn.clicked.connect(self.open_in_devices)
        repo_tab = QWidget()
        lay = QVBoxLayout(repo_tab)
        lay.setContentsMargins(6, 6, 6, 6)
        lay.addWidget(self.repo_tree.repo_label)
        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.addWidget(self.repo_tree)
        vsplit.addWidget(self.check_panel)
        vsplit.setSizes([430, 230])
        lay.addWidget(vsplit, 1)
        self.tabs = QTabWidget()
        self.tabs.addTab(repo_tab, self.tr("Repository"))
        self.tabs.addTab(self.server_panel, self.tr("Local server"))
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        split.setSizes([430, 800])
        self._expose_widgets()

    def _expose_widgets(self) -> None:
        """The sub-modules' widgets as the page's own attributes (tests, hints and other pages use them)."""
        f, t, c, s = self.form, self.repo_tree, self.check_panel, self.server_panel
        self.source_edit, self.source_info, self.repo_edit, self.name_edit = (f.source_edit, f.source_info,
                                                                              f.repo_edit, f.name_edit)
        self.flavor_combo, self.version_spin, self.policy_edit = f.flavor_combo, f.version_spin, f.policy_edit
        self.versions_label, self.batch_spin, self.dyn_check = f.versions_label, f.batch_spin, f.dyn_check
        self.preferred_edit, self.delay_spin, self.kind_combo = f.preferred_edit, f.delay_spin, f.kind_combo
        self.count_spin, self.gpus_edit, self.warmup_check = f.count_spin, f.gpus_edit, f.warmup_check
        self.tokenizer_edit, self.error, self.build_btn, self.check_btn = (f.tokenizer_edit, f.error, f.build_btn,
                                                                           f.check_btn)
        self.progress, self.status_label = f.progress, f.status_label
        self.repo_label, self.tree, self.config_label, self.config_view = (t.repo_label, t.tree, t.config_label,
                                                                           t.config_view)
        self.findings_label, self.findings_table, self.finding_detail = (c.findings_label, c.findings_table,
                                                                         c.finding_detail)
        self.mode_combo, self.serve_btn, self.stop_btn, self.devices_btn = (s.mode_combo, s.serve_btn, s.stop_btn,
                                                                            s.devices_btn)
        self.server_label, self.url_labels, self.server_note, self.log_view = (s.server_label, s.url_labels,
                                                                               s.server_note, s.log_view)

    @property
    def check_report(self) -> Any:
        """The last studio.triton.repo_check.CheckReport shown (None before the first check)."""
        return self.check_panel.report

    # -- repository tree (public, so tests and other pages need no tree items) -------------------------
    def tree_paths(self) -> set[str]:
        """Every path the repository tree lists."""
        return self.repo_tree.tree_paths()

    def current_tree_path(self) -> str | None:
        """The path selected in the repository tree."""
        return self.repo_tree.current_path()

    def select_path(self, path: Path | str) -> bool:
        """Select ``path`` in the repository tree (a model folder shows its config); False if not listed."""
        return self.repo_tree.select_path(path)

    # -- context and payloads --------------------------------------------------------------------------
    def context_changed(self) -> None:
        """The toolbar's model becomes the source when it changes (or while the source still follows it)."""
        self.form.follow_context(self.workspace, self.model_name)

    def open_payload(self, payload: object) -> None:
        """A model path or export folder, {"model": path, "name"?, "repo"?}, or what a Problem names: a check
        finding's location, a file in the repository, or a build option (``--name``) of a failed build."""
        if isinstance(payload, str) and self._open_location(payload):
            return
        if isinstance(payload, dict):
            model = payload.get("model") or payload.get("path")
            if payload.get("repo"):
                self.form.set_repo(str(payload["repo"]))
            if model:
                self.set_source(Path(str(model)))
            if payload.get("name"):
                self.form.set_name(str(payload["name"]))
        elif isinstance(payload, (str, Path)) and str(payload):
            p = Path(payload)
            if p.suffix == ".onnx" or p.is_dir():  # anything else (a tensor, a flag) only brings the page up
                self.set_source(p)
        self.tabs.setCurrentIndex(0)
        self.form.update_versions()

    def _open_location(self, text: str) -> bool:
        if self.check_panel.select_location(text):
            self.tabs.setCurrentIndex(0)
            return True
        if text.startswith("--"):
            for w in self.form.widgets_for(text):
                w.setFocus()
            return True
        repo = self.repo_edit.text().strip()
        p = Path(text)
        if repo and p.exists() and (p == Path(repo) or Path(repo) in p.parents):
            self.tabs.setCurrentIndex(0)
            self.show_repo(Path(repo), select=p if p.is_file() else None)
            self.select_path(p)
            return True
        return False

    def set_source(self, path: Path, auto: bool = False) -> None:
        """Use ``path`` as the model; the name follows it until the user types one."""
        self.form.set_source(path, auto=auto)

    # -- build and check -------------------------------------------------------------------------------
    def options(self) -> Any:
        """BuildOptions from the form, or None after showing what is wrong next to the field."""
        return self.form.options()

    def build(self) -> Any:
        """Start the build job (build_repo, then check_repo on the result); returns its JobHandle."""
        opts = self.options()
        if opts is None:
            return None

        def work(job: Any) -> Any:
            from studio.triton.repo_builder import build_repo
            from studio.triton.repo_check import check_repo

            report = build_repo(opts, job)
            job.set_status(self.tr("checking the repository"))
            return report, check_repo(opts.repo)

        self.build_btn.setEnabled(False)
        self.progress.setValue(0)
        self.status_label.setText(self.tr("building {name} into {repo}…").format(name=opts.name, repo=opts.repo))
        return self.jobs.start(f"{self.page_id}:build", self.tr("Build Triton repo {name}").format(name=opts.name), work, self._built,
                               self._build_failed)

    def _built(self, res: Any) -> None:
        report, check = res
        self.build_report = report
        self.build_btn.setEnabled(True)
        self.progress.setValue(100)
        built = ", ".join(f"{m.name} v{m.version} ({m.kind}, {m.flavor})" for m in report.models)
        self.status_label.setText(self.tr("built {models}; clients call '{entry}'").format(
            models=built, entry=report.entry_model)
            + "".join("\n" + self.tr("note: {note}").format(note=w) for w in report.warnings))
        self.sig_log.emit(self.tr("built Triton repository {repo}: {models}").format(repo=report.repo, models=built))
        self.check_panel.show_check(check)
        entry = Path(report.repo) / report.entry_model / "config.pbtxt"
        self.show_repo(Path(report.repo), select=entry if entry.is_file() else None)
        self.form.update_versions()

    def _build_failed(self, err: StudioError) -> None:
        self.build_btn.setEnabled(True)
        self.progress.setValue(0)
        if isinstance(err, JobCancelled):
            self.status_label.setText(self.tr("build cancelled"))
            return
        self.status_label.setText(self.tr("Build failed: see the message above."))
        self.error.show_error(err.message, *self.form.widgets_for(err.offending or ""), hint=err.hint)

    def check(self) -> Any:
        """Start the check job on the repository field's folder; returns its JobHandle."""
        repo = self.repo_edit.text().strip()
        self.error.clear_error()
        if not repo:
            self.error.show_error(self.tr("choose a repository folder to check"), self.repo_edit)
            return None

        def work(job: Any) -> Any:
            from studio.triton.repo_check import check_repo

            job.set_status(self.tr("checking {repo}").format(repo=repo))
            return check_repo(repo)

        self.check_btn.setEnabled(False)
        return self.jobs.start(f"{self.page_id}:check", self.tr("Check Triton repo {name}").format(name=Path(repo).name), work,
                               self._checked, self._check_failed)

    def _checked(self, report: Any) -> None:
        self.check_btn.setEnabled(True)
        self.status_label.setText(self.tr("checked {name}: {n} error(s)").format(name=Path(report.repo).name, n=len(report.errors)))
        self.check_panel.show_check(report)
        selected = self.config_view.path
        self.show_repo(Path(report.repo), select=Path(selected) if selected else None)
        for f in report.errors:
            where = f.model or self.tr("repository")
            self.sig_problem.emit(Problem("error", f"{where}: {f.message}",
                                          source="triton check",
                                          page=self.page_id, location=finding_location(f), hint=f.hint or None))

    def _check_failed(self, err: StudioError) -> None:
        self.check_btn.setEnabled(True)
        if not isinstance(err, JobCancelled):
            self.error.show_error(err.message, self.repo_edit, hint=err.hint)

    def _finding_selected(self, f: Any) -> None:
        self.repo_tree.show_finding(f.file, f.field, f.severity, f.model, Path(self.check_report.repo))

    # -- repository view -------------------------------------------------------------------------------
    def show_repo(self, repo: Path, select: Path | None = None) -> None:
        """Fill the file tree from ``repo`` and show ``select`` (a config.pbtxt) in the viewer."""
        self.repo_tree.show_repo(repo, select)

    def show_file(self, path: Path) -> None:
        """Show one file of the repository in the viewer."""
        self.repo_tree.show_file(path)

    # -- local server ----------------------------------------------------------------------------------
    def serve(self) -> Any:
        """Start a LocalTritonServer on free ports in a job; never blocks the GUI."""
        from studio.triton.repo_builder import repo_models
        from studio.triton.server import LocalTritonServer

        if self.server is not None and self.server_state in ("starting", "running", "stopping"):
            return None
        repo = self.repo_edit.text().strip()
        self.error.clear_error()
        if not repo or not Path(repo).is_dir():
            self.error.show_error(self.tr("build a repository first (or choose an existing one)"), self.repo_edit)
            return None
        mode = self.server_panel.mode()
        try:
            srv = LocalTritonServer(repo, model_control_mode=mode,
                                    load_models=repo_models(repo) if mode == "explicit" else ())
        except StudioError as exc:
            self.error.show_error(exc.message, self.repo_edit, hint=exc.hint)
            return None
        old = self.server
        if old is not None:  # an exited or failed one: reap its stray processes and temp folder
            old.stop(timeout=5)
            old.cleanup()
        self.server = srv
        done = threading.Event()
        self._serve_done = done
        self._set_server_state("starting")
        self.log_view.clear()
        self.tabs.setCurrentIndex(1)
        self.log_timer.start()
        self._serve_handle = self.jobs.start(f"{self.page_id}:serve", self.tr("Serve {name} locally").format(name=Path(repo).name),
                                             serve_work(srv, mode, done), self._served, self._serve_failed)
        return self._serve_handle

    def _served(self, srv: Any) -> None:
        if srv is not self.server:
            return
        self._set_server_state("running")
        note = self.tr("repository {repo}").format(repo=srv.source_repo)
        if srv.converted:
            note += self.tr("; this CPU server has no ONNX Runtime backend, so these models are served through a "
                            "generated Python-backend copy (same ONNX file, run by onnxruntime): {models}").format(
                models=", ".join(srv.converted))
        self.server_note.setText(note)
        self.sig_log.emit(self.tr("local tritonserver ready: HTTP {http}, gRPC {grpc}, metrics {metrics}").format(
            http=srv.http_url, grpc=srv.grpc_url, metrics=srv.metrics_url))
        self._record_device(srv)
        self._refresh_server()

    def _record_device(self, srv: Any) -> None:
        """The served server becomes the shared state's selected device (Devices polls it, Dashboards target
        it); a page without a workspace has nowhere to keep it."""
        if self.state.workspace is None:
            return
        self.state.add_device(device_entry(srv), select=True)
        self._recorded = srv
        self.state.set_device_state(DEVICE_NAME, "ok",
                                    self.tr("local tritonserver (pid {pid}) ready").format(pid=srv.proc.pid),
                                    models=served_models(srv))

    def _device_stopped(self, state: str, detail: str) -> None:
        """The recorded server ended: its entry stays (the user sees it), its state says how it ended."""
        if self._recorded is not None and self.state.device(DEVICE_NAME) is not None:
            self.state.set_device_state(DEVICE_NAME, state, detail)
        if state == "stopped":  # an exited server is still this page's until Stop or a new Serve
            self._recorded = None

    def _serve_failed(self, err: StudioError) -> None:
        srv = self.server
        self._refresh_server()
        if srv is not None:
            srv.cleanup()
        if isinstance(err, JobCancelled) or self._shut:
            self._set_server_state("stopped")
            return
        self._set_server_state("failed")  # the window lists the failed job in Problems (its log is shown here)
        self.server_note.setText(err.message)

    def stop_server(self) -> Any:
        """Stop the server in a job (SIGTERM, then SIGKILL of its process group)."""
        srv = self.server
        if srv is None or self.server_state not in ("starting", "running", "exited"):
            return None
        if self.server_state == "starting" and self._serve_handle is not None:
            self.jobs.cancel(self._serve_handle.id)
            return None
        self._set_server_state("stopping")
        return self.jobs.start(f"{self.page_id}:stop", self.tr("Stop local tritonserver"), stop_work(srv), self._stopped,
                               self._stopped)

    def _stopped(self, rc: Any) -> None:
        self.log_timer.stop()
        self._set_server_state("stopped")
        self._device_stopped("stopped", self.tr("stopped on the Triton page"))
        self.sig_log.emit(self.tr("local tritonserver stopped (exit code {code})").format(code=rc)
                          if not isinstance(rc, StudioError)
                          else self.tr("stopping tritonserver: {error}").format(error=rc.message))

    def open_in_devices(self) -> None:
        """Select the running server in the shared state and bring up the Devices page on it."""
        srv = self.server
        if srv is None or self.server_state != "running":
            return
        if self.state.device(DEVICE_NAME) is not None:
            self.state.select_device(DEVICE_NAME)
        self.sig_open_page.emit("devices", {"url": srv.http_url, "name": DEVICE_NAME,
                                            "metrics_url": srv.metrics_url})

    def _refresh_server(self) -> None:
        srv = self.server
        if srv is None:
            return
        self.server_panel.show_log(srv.log_tail(LOG_LINES))
        if self.server_state == "running" and not srv.is_running():
            code = srv.proc.returncode if srv.proc is not None else None
            self._set_server_state("exited")
            self._device_stopped("exited", self.tr("tritonserver exited (code {code})").format(code=code))
            self.server_note.setText(self.tr("tritonserver exited unexpectedly (code {code}); its last log lines are below").format(code=code))
            self.sig_problem.emit(Problem("error", self.tr("local tritonserver exited (code {code})").format(code=code),
                                          source="triton serve", page=self.page_id,
                                          hint=self.tr("see the server log on the Triton page")))

    def _set_server_state(self, state: str) -> None:
        self.server_state = state
        self.server_panel.show_state(state, self.server)

    def shutdown(self) -> None:
        """Window closing: end a start-up in progress and stop the server (blocks until it is gone)."""
        self._shut = True
        self.log_timer.stop()
        srv = self.server
        if srv is None:
            return
        if self._serve_handle is not None and self._serve_handle.status == "running":
            self.jobs.cancel(self._serve_handle.id)
        for _ in range(300):  # the start-up job sees the cancel within ~0.2 s; wait for it at most 60 s
            if self._serve_done.wait(0.2):
                break
            srv.stop(timeout=5)
        srv.stop()
        srv.cleanup()
        self.server_state = "stopped"
        self._device_stopped("stopped", self.tr("stopped with the window"))

    # -- jobs ------------------------------------------------------------------------------------------
    def _on_progress(self, handle: Any, pct: float) -> None:
        if handle.kind == f"{self.page_id}:build":
            self.progress.setValue(int(pct))

    def _on_status(self, handle: Any, text: str) -> None:
        if handle.kind in (f"{self.page_id}:build", f"{self.page_id}:check"):
            self.status_label.setText(text)
        elif handle.kind == f"{self.page_id}:serve":
            self.server_note.setText(text)

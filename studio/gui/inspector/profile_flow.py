"""Per-op profiling for the inspector page: runs studio.profiling as a job, keeps each model's latest profile
for the session (and saves it with the workspace), shows the one of the model on screen, and compares a fixed
model with its original.

``ProfileFlow`` holds the profile state; the page's widgets (Profile tab, colour mode, status line) show it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication

from studio.core.errors import StudioError
from studio.gui.inspector.profile_data import graph_names, input_dims, load_saved
from studio.gui.inspector.profile_format import fmt_ms
from studio.gui.inspector.profile_panel import ProfileShapesDialog

translate = QCoreApplication.translate

if TYPE_CHECKING:
    from studio.gui.pages.inspect_page import InspectPage

PROFILE_JOB = "inspect:profile"


class ProfileFlow:
    """The profile of the model shown, the session's profiles, and the jobs that make them."""

    def __init__(self, page: InspectPage) -> None:
        self.page = page
        self.report: Any = None  # studio.profiling.report.ProfileReport of the model shown
        self.comparison: Any = None  # ProfileComparison of the last "Compare with original"
        self.names: dict[str, str] = {}  # profile node key -> graph node name
        self.keys: dict[str, str] = {}  # graph node name -> profile node key
        self._session: dict[Path, Any] = {}  # resolved model path -> its latest profile (this session)
        self.stale = False
        self.saved_to: Path | None = None
        self.runs = 20

    @property
    def profiles(self) -> Mapping[Path, Any]:
        """Resolved model path -> the latest profile taken of it in this session (read-only)."""
        return MappingProxyType(self._session)

    # ---- running ---------------------------------------------------------------------------------------
    def profile_current(self, shapes: dict[str, list[int]] | None = None, runs: int | None = None,
                        ask: bool = True) -> None:
        """Profile the model shown with ONNX Runtime as a job; asks for sizes when inputs have dynamic dims."""
        page = self.page
        if page.model_path is None:
            return
        stats_inputs = dict(page.report.stats.inputs or {}) if page.report is not None else {}
        if shapes is None and ask and input_dims(stats_inputs):
            dlg = ProfileShapesDialog(stats_inputs, runs or self.runs, page)
            if dlg.exec() != ProfileShapesDialog.DialogCode.Accepted:
                return
            shapes, runs = dlg.shapes(), dlg.runs.value()
        self.start(page.model_path, shapes, runs or self.runs)

    def start(self, path: Path, shapes: dict[str, list[int]] | None, runs: int, warmup: int = 3,
              optimization: str = "all", before: Any = None) -> None:
        """Profile ``path``; with ``before`` (the original's profile) the result is compared with it."""
        from studio.profiling.api import profile

        page = self.page
        page.status_label.setText(translate("ProfileFlow", "profiling…"))
        self._enable_buttons(False, False)
        page.jobs.start(PROFILE_JOB, translate("ProfileFlow", "profile {name}").format(name=path.name),
                        lambda job: profile(path, shapes=shapes or None, runs=runs, warmup=warmup,
                                            optimization=optimization, job=job),
                        on_done=lambda rep, p=path, b=before: self._done(rep, p, b),
                        on_failed=self._failed)

    def _enable_buttons(self, profile: bool, compare: bool) -> None:
        panel = self.page.profile_panel
        self.page.profile_action.setEnabled(profile)
        panel.profile_button.setEnabled(profile)
        panel.compare_button.setEnabled(compare)

    def _failed(self, err: StudioError) -> None:
        self._enable_buttons(self.page.model_path is not None, True)
        self.page.job_failed(err)

    def _done(self, rep: Any, path: Path, before: Any = None) -> None:
        page = self.page
        self._enable_buttons(True, True)
        self._session[path.resolve()] = rep
        saved: Path | None = None
        if page.workspace is not None:
            from studio.profiling.api import save_to_workspace

            try:
                saved = save_to_workspace(rep, page.workspace)
                page.sig_log.emit(translate("ProfileFlow", "profile of {name} saved to {path}").format(
                    name=path.name, path=saved))
            except (OSError, StudioError) as exc:
                page.sig_log.emit(translate("ProfileFlow", "could not save the profile of {name}: {error}").format(
                    name=path.name, error=exc))
        if page.model_path is None or path.resolve() != page.model_path.resolve():
            return  # another model was opened meanwhile: kept for it, not shown
        page.status_label.setText(translate("ProfileFlow", "profiled: {fmt_ms} ms per run").format(fmt_ms=fmt_ms(rep.run_mean_ms)))
        self.show(rep, saved_to=saved)
        if before is not None:
            from studio.profiling.api import compare_profiles

            self.comparison = compare_profiles(before, rep)
            page.profile_panel.set_comparison(self.comparison)
        page.toolbar.set_mode("profile")
        page.side.setCurrentWidget(page.profile_panel)

    # ---- showing ---------------------------------------------------------------------------------------
    def show(self, rep: Any, stale: bool = False, saved_to: Path | None = None) -> None:
        """Make ``rep`` (or None) the profile on screen: Profile tab, colour mode, the node's timing line."""
        page = self.page
        self.report = rep
        self.stale, self.saved_to = stale, saved_to
        self.names = graph_names(rep, page.graph) if rep is not None else {}
        self.keys = {v: k for k, v in self.names.items()}
        note = translate("ProfileFlow", "not saved (no workspace open)") if rep is not None and page.workspace is None else ""
        page.profile_panel.set_report(rep, self.names, stale=stale, saved_to=saved_to, note=note)
        page.toolbar.set_mode_available("profile", rep is not None)
        if rep is None and page.toolbar.mode() == "profile":
            page.color_mode.setCurrentIndex(0)
        page.apply_colour_mode()
        if page.selected_node:
            page.selection.show_node(page.selected_node)

    def reshow(self) -> None:
        """The graph arrived after the profile: profile keys spell repeated names differently, map them now."""
        if self.report is not None:
            self.show(self.report, stale=self.stale, saved_to=self.saved_to)

    def load_for(self, path: Path) -> None:
        """A new model is shown: its profile from this session, else the one saved in the workspace."""
        page = self.page
        self.comparison = None
        page.profile_panel.set_comparison(None)
        rep = self._session.get(path.resolve())
        stale, saved_to = False, None
        if rep is None:
            found = load_saved(page.workspace, path)
            if found is not None:
                from studio.profiling.api import workspace_profile_path

                rep, stale = found
                saved_to = workspace_profile_path(page.workspace, path)
                page.sig_log.emit(translate("ProfileFlow", "loaded the saved profile of {name} from {path}").format(
                    name=path.name, path=saved_to))
        self.show(rep, stale=stale, saved_to=saved_to)
        self.update_compare_button()

    def heat(self) -> dict[str, float] | None:
        """Graph node name -> share of node time; nodes without kernel time are left out (drawn neutral)."""
        if self.report is None:
            return None
        return {self.names.get(n.key, n.key): n.share for n in self.report.nodes if n.mean_ms > 0}

    def netron_heat(self) -> dict[str, float] | None:
        """As ``heat`` with every node: Netron keeps its own op-category colours where nothing is painted."""
        if self.report is None:
            return None
        return {self.names.get(n.key, n.key): n.share for n in self.report.nodes}

    def slowest_ms(self) -> float:
        return max((n.mean_ms for n in self.report.nodes), default=0.0) if self.report is not None else 0.0

    # ---- before / after a fix --------------------------------------------------------------------------
    def original_profile(self) -> Any:
        """The profile of the model the last fix started from, when the fixed model is the one shown."""
        page = self.page
        fix = page.last_fix
        if fix is None or page.model_path is None or fix.path.resolve() != page.model_path.resolve():
            return None
        rep = self._session.get(fix.source.resolve())
        if rep is None:
            found = load_saved(page.workspace, fix.source)
            rep = found[0] if found is not None else None
        return rep

    def update_compare_button(self) -> None:
        page = self.page
        before = self.original_profile()
        if before is None:
            page.profile_panel.set_compare_available(None)
            return
        page.profile_panel.set_compare_available(
            translate("ProfileFlow", "profile {name} with the inputs of the original's profile ({original}, {runs} "
                                     "runs) and show the deltas").format(
                name=page.model_path.name if page.model_path else "", original=Path(before.model).name,
                runs=before.runs))

    def compare_with_original(self) -> None:
        """Profile the fixed model exactly as its original was profiled, then show compare_profiles deltas."""
        before = self.original_profile()
        if before is None or self.page.model_path is None:
            return
        self.start(self.page.model_path, dict(before.input_shapes), before.runs, before.warmup,
                   before.optimization, before=before)


__all__ = ["PROFILE_JOB", "ProfileFlow"]

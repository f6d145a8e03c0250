"""The main window's View > Language switch: installs the chosen translator and re-draws the window in it.

The window's own parts (menus, toolbar, docks, sidebar, status bar) set their texts again on
``QEvent.LanguageChange``. The pages build their texts once, when they are made, so they are built again in the
new language (their state comes back from the workspace through ``set_context``, as after a start); while a job
runs that would cut its page's progress off, so the switch waits: the status bar says to apply it after the jobs
finish or by restarting, and nothing is half-switched.

A mixin of :class:`studio.gui.main_window.MainWindow`.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent

from studio.gui import i18n

translate = QCoreApplication.translate


def page_title(title: str) -> str:
    """A page's title in the current language (plugin pages' titles are shown as they come)."""
    titles = {
        "Export": translate("Pages", "Export"), "Inspect": translate("Pages", "Inspect"),
        "Diff": translate("Pages", "Diff"), "Compile": translate("Pages", "Compile"),
        "Triton": translate("Pages", "Triton"), "Package": translate("Pages", "Package"),
        "Devices": translate("Pages", "Devices"), "Fleet": translate("Pages", "Fleet"),
        "Dashboards": translate("Pages", "Dashboards"),
    }
    return titles.get(title, title)


class LanguageSwitch:
    settings: Any
    pages: list[Any]
    sidebar: Any
    stack: Any
    jobs: Any
    log_panel: Any

    def set_language(self, choice: str) -> bool:
        """View > Language: ``system``, ``en`` or ``zh_CN``; saved, then applied now unless a job is running.
        True when the window now shows the chosen language."""
        resolved = i18n.resolve(choice)
        if resolved.warning:  # an unknown code: nothing saved, English stays
            self._language_message(resolved.warning, error=True)
            self._check_language_action()
            return False
        i18n.save_language(self.settings, choice)
        self._save_settings()  # type: ignore[attr-defined]
        if resolved.code == i18n.current():
            self._check_language_action()
            self.flash(translate("MainWindow", "Language: {name}").format(  # type: ignore[attr-defined]
                name=i18n.LANGUAGES[resolved.code]), 5000)
            return True
        if self.jobs.running():
            self._check_language_action()
            self.flash(translate("MainWindow", "Language set to {name}: restart to apply (jobs are running; the "
                                 "pages switch once no job runs)").format(name=i18n.LANGUAGES[resolved.code]),
                       10000)  # type: ignore[attr-defined]
            return False
        failed = i18n.translator().apply(resolved.code)
        if failed:
            self._language_message(failed, error=True)
        self.retranslate_window()
        self.rebuild_pages()
        self._check_language_action()
        if not failed:
            self.flash(translate("MainWindow", "Language: {name}").format(  # type: ignore[attr-defined]
                name=i18n.LANGUAGES[i18n.current()]), 5000)
        return i18n.current() == resolved.code

    def apply_start_language(self, choice: i18n.Choice) -> None:
        """At start-up: say why the language asked for is not shown (broken .qm, unknown code)."""
        if choice.warning:
            self._language_message(choice.warning, error=True)

    def _language_message(self, text: str, error: bool = False) -> None:
        from studio.core.errors import Problem

        self.log_panel.append_log(text, source="language")
        if error:
            self.log_panel.add_problem(Problem("warning", text, source="language",
                                               hint=translate("MainWindow", "View > Language, or `make translations`")))
        self.flash(text, 10000)  # type: ignore[attr-defined]

    def _check_language_action(self) -> None:
        act = getattr(self, "language_actions", {}).get(i18n.saved_language(self.settings))
        if act is not None:
            act.setChecked(True)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)  # type: ignore[misc]
        if (event.type() == QEvent.Type.LanguageChange and getattr(self, "toolbar", None) is not None
                and getattr(self, "_drawn_language", None) != i18n.current()):
            self.retranslate_window()

    def retranslate_window(self) -> None:
        """The window's own texts in the current language (menus rebuilt, labels set again)."""
        from studio.gui.window.menus import build_menus

        w: Any = self
        w._drawn_language = i18n.current()
        build_menus(w)
        w._sync_theme_actions()
        w.refresh_workspaces()
        w.toolbar.retranslate()
        w.jobs_dock.setWindowTitle(translate("MainWindow", "Jobs"))
        w.log_dock.setWindowTitle(translate("MainWindow", "Log / Problems"))
        w.jobs_panel.retranslate()
        w.log_panel.retranslate()
        for i, lp in enumerate(self.pages):
            item = self.sidebar.item(i)
            if item is not None:
                item.setText(sidebar_text(lp))
        w.refresh_models()
        w.status.retranslate(w.workspace)

    def rebuild_pages(self) -> None:
        """Build every page again (their texts are made in their constructors), showing the same page."""
        from studio.gui.pages import load_pages

        w: Any = self
        row = self.sidebar.currentRow()
        current = self.pages[row].page_id if 0 <= row < len(self.pages) else None
        for lp in self.pages:
            if lp.page is not None:
                try:
                    lp.page.shutdown()
                except Exception as exc:  # one page failing to stop must not keep the others
                    self.log_panel.append_log(translate("MainWindow", "{page} page shutdown failed: {error}").format(
                        page=page_title(lp.title), error=exc), source="studio")
        while self.stack.count():
            # the old page stays the stack's child (removeWidget keeps the parent) until Qt deletes it here, on the
            # GUI thread: unparented, it would die wherever its last Python reference goes, a poller's or job's
            # worker thread among them (Qt warned "Timers cannot be started from another thread", or crashed)
            old = self.stack.widget(0)
            self.stack.removeWidget(old)
            old.hide()
            old.deleteLater()
        self.sidebar.blockSignals(True)
        self.sidebar.clear()
        self.sidebar.blockSignals(False)
        self.pages = load_pages(self.jobs, w._page_specs)
        w._fill_pages()
        w._bind_pages()
        w._propagate()
        if current is None or not w.go_to_page(current):
            self.sidebar.setCurrentRow(0)


def sidebar_text(lp: Any) -> str:
    title = page_title(lp.title)
    return title if lp.ok else translate("MainWindow", "{title}  (error)").format(title=title)

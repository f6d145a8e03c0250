"""The sidebar's page registry: an ordered list of (module path, class name).

Pages are added by later issues as ``studio/gui/pages/<x>_page.py`` subclasses of ``studio.gui.page.Page``.
Every entry's module must exist: a missing one is a mistake in this list and ``load_pages`` raises naming it
(it used to be skipped silently, which hid three stale entries). A page whose import or construction fails is
still listed, with its error, and the rest of the window works. When an entry's class
name is not found the module's only Page subclass is used, so a page may pick its own class name.
Pages contributed by plugins (manifest ``provides.pages``) follow the built-in ones, resolved through the plugin
registry when the window is built; a failing one is an entry with its error, like a broken built-in page.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from studio.gui.jobs_qt import JobRunner
    from studio.gui.page import Page

PAGE_SPECS: list[tuple[str, str]] = [
    ("studio.gui.pages.export_page", "ExportPage"),
    ("studio.gui.pages.inspect_page", "InspectPage"),
    ("studio.gui.pages.diff_page", "DiffPage"),
    ("studio.gui.pages.compile_page", "CompilePage"),
    ("studio.gui.pages.triton_page", "TritonPage"),
    ("studio.gui.pages.packaging_page", "PackagingPage"),
    ("studio.gui.pages.devices_page", "DevicesPage"),
    ("studio.gui.pages.fleet_page", "FleetPage"),
    ("studio.gui.pages.dashboards_page", "DashboardsPage"),
]


@dataclass
class LoadedPage:
    """One sidebar entry: the page widget, or the error that kept it from loading."""

    module: str
    class_name: str
    title: str
    page_id: str
    page: Page | None = None
    error: str | None = None
    plugin: str | None = None  # the plugin that contributed the page (None: a built-in page)

    @property
    def ok(self) -> bool:
        return self.page is not None


def module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _title_from(module: str, class_name: str) -> tuple[str, str]:
    base = module.rsplit(".", 1)[-1].removesuffix("_page")
    return base.replace("_", " ").title(), base


def _find_class(mod: object, class_name: str) -> type:
    from studio.gui.page import Page

    cls = getattr(mod, class_name, None)
    if isinstance(cls, type) and issubclass(cls, Page):
        return cls
    own = [c for _, c in inspect.getmembers(mod, inspect.isclass)
           if issubclass(c, Page) and c is not Page and c.__module__ == getattr(mod, "__name__", "")]
    if len(own) == 1:
        return own[0]
    raise ImportError(f"{getattr(mod, '__name__', mod)} defines no Page subclass named {class_name}")


def plugin_pages(jobs: JobRunner | None, skip: list[tuple[str, str]] | None = None) -> list[LoadedPage]:
    """Build the pages plugins contribute; one that fails (import, resolve, construction) keeps its error.

    A built-in plugin declaring a page already in ``skip`` (PAGE_SPECS) is that page, not a second one."""
    from studio.core.plugins import contributions
    from studio.gui.page import Page

    known = set(skip or [])
    out: list[LoadedPage] = []
    for c in contributions("pages"):
        if (c.module, str(c.meta.get("class", ""))) in known:
            continue
        title = str(c.meta.get("title") or c.name.replace("-", " ").title())
        page_id = f"plugin-{c.name}"
        try:
            title, cls = c.resolve()
            if not issubclass(cls, Page):
                raise TypeError(f"{cls.__module__}.{cls.__qualname__} is not a studio.gui.page.Page subclass")
            page = cls(jobs)
        except Exception as exc:  # a broken plugin page must not take the window down
            detail = c.detail or "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
            if c.error is None:
                c.fail(f"{type(exc).__name__}: {exc}", detail)
            out.append(LoadedPage(c.module or c.plugin.name, str(c.meta.get("class", "")), title, page_id,
                                  error=f"plugin {c.plugin.name}: {c.error}\n\n{detail}", plugin=c.plugin.name))
            continue
        pid = page.page_id if page.page_id != Page.page_id else page_id
        out.append(LoadedPage(cls.__module__, cls.__name__, page.title if page.title != Page.title else title, pid,
                              page=page, plugin=c.plugin.name))
    return out


def load_pages(jobs: JobRunner | None, specs: list[tuple[str, str]] | None = None) -> list[LoadedPage]:
    """Import and build every page in order, then the plugins' pages (only with the default ``specs``: a window
    built for a chosen list gets exactly that); failures become entries with an error, but a module that does not
    exist raises ModuleNotFoundError (a wrong entry in the list, not a broken page)."""
    out: list[LoadedPage] = []
    for module, class_name in specs if specs is not None else PAGE_SPECS:
        if not module_exists(module):
            raise ModuleNotFoundError(f"page module '{module}' ({class_name}) does not exist: correct or remove its "
                                      "entry in studio.gui.pages.PAGE_SPECS, or add the module", name=module)
        title, page_id = _title_from(module, class_name)
        try:
            mod = importlib.import_module(module)
            cls = _find_class(mod, class_name)
            page = cls(jobs)
        except Exception as exc:  # a broken page must not take the window down
            detail = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-6:])
            out.append(LoadedPage(module, class_name, title, page_id,
                                  error=f"{type(exc).__name__}: {exc}\n\n{detail}"))
            continue
        out.append(LoadedPage(module, class_name, page.title or title, page.page_id or page_id, page=page))
    if specs is None:
        out.extend(plugin_pages(jobs, PAGE_SPECS))
    return out

"""Where the window's geometry, dock layout and last page are kept between runs (QSettings in the config dir)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSettings

from studio.core.paths import config_dir

ORGANIZATION = "DeploymentStudio"
APPLICATION = "Deployment Studio"


def qsettings() -> QSettings:
    """Window state store (organisation "DeploymentStudio"), kept in the studio's config folder."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(config_dir()))
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, "studio")


def save_window_state(window: Any, page_id: str) -> None:
    s = qsettings()
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())
    s.setValue("window/page", page_id)
    s.sync()


def restore_window_state(window: Any) -> tuple[bool, str | None]:
    """Geometry and dock layout restored on ``window``; returns (geometry restored, last page id)."""
    s = qsettings()
    geo = s.value("window/geometry")
    restored = bool(window.restoreGeometry(geo)) if geo is not None else False
    state = s.value("window/state")
    if state is not None:
        window.restoreState(state)
    page = s.value("window/page")
    return restored, page if isinstance(page, str) and page else None

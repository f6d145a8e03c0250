"""Target ids for the toolbar's target combo: the inspector's own profile list (built-in, plugins', then the
workspace's), so the combo offers exactly what `studio inspect` checks; an unreadable profile is still listed
by its file name (the inspector is the one to report it)."""

from __future__ import annotations

from pathlib import Path

from studio.core.errors import StudioError
from studio.inspect.profiles import BUILTIN_IDS

DEFAULT_TARGETS = BUILTIN_IDS


def target_ids(extra_dirs: list[Path] | None = None) -> list[str]:
    """Built-in profiles first (in the default order), then plugins' and workspace profiles."""
    from studio.inspect.profiles import _profile_files, list_targets

    dirs = [d for d in (extra_dirs or []) if Path(d).is_dir()]
    try:
        return [p.id for p in list_targets(dirs or None)]
    except StudioError:  # a broken profile: list every file by its stem, the inspector says what is wrong
        stems = list(dict.fromkeys(f.stem for f in _profile_files(dirs or None)))
        order = {t: i for i, t in enumerate(BUILTIN_IDS)}
        return sorted(stems, key=lambda t: (order.get(t, len(order)), stems.index(t)))

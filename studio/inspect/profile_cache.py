"""Per-user cache of computed target profiles (the ONNX Runtime kernel registry walk: 0.45 s per run).

Target YAML files are cached the same way (libyaml still builds the objects in Python: 25 ms for nine files,
and yaml's import compiles its resolver's regexes). A cached profile is used only when it was made by the same
builds: the key holds the file size and mtime of each named package's compiled extension modules (found without
importing the package), of the studio modules that compute and define profiles, and of the profile's own file. Any unreadable or stale entry is recomputed; the cache is never
required (``STUDIO_NO_CACHE=1`` turns it off). Pickle, because the entries are the studio's own dataclasses in
the user's own cache folder.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import pickle
from collections.abc import Callable
from pathlib import Path

from studio.inspect.profile_model import TargetProfile

_OWN = ("profiles.py", "profile_model.py", "profile_schema.py", "ort_profile.py", "custom_domains.py", "profile_cache.py",
        "../core/resource_schema.py")


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


@functools.lru_cache(maxsize=8)
def _builds(packages: tuple[str, ...]) -> tuple[str, ...] | None:
    parts: list[str] = []
    for name in packages:
        spec = importlib.util.find_spec(name)  # a top-level spec: the package is not imported
        if spec is None or not spec.origin:
            return None
        root = Path(spec.origin).parent
        parts += sorted(_stamp(f) for pat in ("*.so", "*.pyd", "capi/*.so", "capi/*.pyd") for f in root.glob(pat))
        parts.append(_stamp(Path(spec.origin)))
    here = Path(__file__).parent
    return (*parts, *(_stamp(here / m) for m in _OWN))


def build_key(packages: tuple[str, ...], *modules: str) -> str | None:
    """What the profile depends on; None when a package cannot be found (then nothing is cached)."""
    builds = _builds(packages)
    if builds is None:
        return None
    parts = [*builds, *(_stamp(Path(m)) for m in modules)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def cache_file(kind: str, key: str) -> Path:
    from studio.core.paths import cache_dir

    return cache_dir() / "inspect" / f"{kind}-{key}.pickle"


def cached_profile(kind: str, packages: tuple[str, ...], module: str,
                   compute: Callable[[], TargetProfile]) -> TargetProfile:
    """``compute()``'s profile, read from / written to the cache under a key of ``packages`` and ``module``."""
    key = None if os.environ.get("STUDIO_NO_CACHE") else build_key(packages, module)
    if key is None:
        return compute()
    path = cache_file(kind, key)
    try:
        prof = pickle.loads(path.read_bytes())
        if isinstance(prof, TargetProfile):
            return prof
    except Exception:  # noqa: BLE001 - missing, truncated or from other code: compute it again
        pass
    prof = compute()
    try:
        from studio.core.atomic import atomic_path

        with atomic_path(path) as tmp:
            tmp.write_bytes(pickle.dumps(prof, protocol=pickle.HIGHEST_PROTOCOL))
        for old in path.parent.glob(f"{kind}-*.pickle"):  # entries of older builds or file versions
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:  # a read-only home: the profile still works, only slower next time
        pass
    return prof


def cached_profile_file(path: str, load: Callable[[str], TargetProfile]) -> TargetProfile:
    """A target YAML file's parsed profile (``load(path)``), cached under the file's own stamp."""
    kind = f"file-{Path(path).stem}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"
    return cached_profile(kind, ("onnxruntime", "onnx"), path, lambda: load(path))

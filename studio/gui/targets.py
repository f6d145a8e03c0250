"""Target ids for the toolbar's target combo: the profiles in studio/resources/targets/*.yaml (an install
without them is an InstallError, never a silent built-in list), then the workspace's own profiles."""

from __future__ import annotations

from pathlib import Path

from studio.core.paths import resource_folder

DEFAULT_TARGETS = ("tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax", "ort-cpu",
                   "hailo-8", "mlu370")


def _profile_id(path: Path) -> str:
    """A profile's ``id`` (or ``name``) field; the file stem when the file has none or cannot be read."""
    try:
        import yaml

        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except Exception:  # a broken profile is the inspector's to report; the combo still lists it by file name
        return path.stem
    if isinstance(data, dict):
        for key in ("id", "target", "name"):
            if isinstance(data.get(key), str) and data[key].strip():
                return data[key].strip()
    return path.stem


def target_ids(extra_dirs: list[Path] | None = None) -> list[str]:
    """Built-in profiles first (in the default order where known), then workspace profiles."""
    found: list[str] = []
    for folder in [resource_folder("targets", "*.yaml"), *(extra_dirs or [])]:
        if folder.is_dir():
            for f in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")):
                tid = _profile_id(f)
                if tid not in found:
                    found.append(tid)
    order = {t: i for i, t in enumerate(DEFAULT_TARGETS)}
    return sorted(found, key=lambda t: (order.get(t, len(order)), found.index(t)))

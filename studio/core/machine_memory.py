"""The memory a process may still take on this machine, and the error for work that would not fit in it.

Why one module: the export (studio.export.memory) and the fix (studio.optimize.memory) both estimate their peak
before starting and stop with exit 2 instead of an out-of-memory kill half-way; both read the same free memory.
"""

from __future__ import annotations

from pathlib import Path

from studio.core.errors import StudioError

GB = 1e9


class MemoryShortfall(StudioError, kind="resources"):
    """The work would need more memory than the machine has free (exit 2: nothing was started or written)."""


def _mem_available() -> int:
    """The kernel's MemAvailable (no psutil: the export extra does not install it); psutil elsewhere."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import psutil

    return int(psutil.virtual_memory().available)


def machine_available() -> tuple[int, str]:
    """Memory this process may still take: MemAvailable, lowered by a cgroup limit (v2 or v1) when there is one."""
    avail, source = _mem_available(), "MemAvailable"
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            raw = Path(limit_file).read_text().strip()
            if raw == "max" or int(raw) >= 1 << 60:
                continue
            room = int(raw) - int(Path(usage_file).read_text().strip())
        except (OSError, ValueError):
            continue
        if room < avail:
            avail, source = room, f"cgroup limit {int(raw) / GB:.1f} GB"
    return avail, source

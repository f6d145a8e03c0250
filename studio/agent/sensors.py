"""Board temperature and power readings from sysfs (hwmon, thermal zones, INA3221, RAPL) or tegrastats.

Every reading carries its source ("hwmon:coretemp", "ina3221:VDD_IN", "tegrastats:VDD_IN", ...); a quantity
the board does not expose is reported as source "not available" rather than as a made-up zero.
``STUDIO_AGENT_SYSFS_ROOT`` points the reader at another root (a board's sysfs copied for a test).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

NOT_AVAILABLE = "not available"


@dataclass
class Reading:
    sensor: str
    value: float
    source: str


def _read_num(p: Path) -> float | None:
    try:
        return float(p.read_text().strip())
    except (OSError, ValueError):
        return None


def _label(p: Path, default: str) -> str:
    try:
        return p.read_text().strip() or default
    except OSError:
        return default


class Sensors:
    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root or os.environ.get("STUDIO_AGENT_SYSFS_ROOT") or "/")
        self._rapl_last: dict[str, tuple[float, float]] = {}
        self._tegra: dict[str, float] = {}
        self._tegra_thread: threading.Thread | None = None

    def _hwmons(self) -> list[tuple[str, Path]]:
        base = self.root / "sys/class/hwmon"
        out = []
        for d in sorted(base.glob("hwmon*")):
            out.append((_label(d / "name", d.name), d))
        return out

    def temperatures(self) -> list[Reading]:
        out: list[Reading] = []
        for name, d in self._hwmons():
            for f in sorted(d.glob("temp*_input")):
                v = _read_num(f)
                if v is not None:
                    idx = f.name.removesuffix("_input")
                    out.append(Reading(_label(d / f"{idx}_label", f"{name}.{idx}"), v / 1000.0, f"hwmon:{name}"))
        if out:
            return out
        for z in sorted((self.root / "sys/class/thermal").glob("thermal_zone*")):
            v = _read_num(z / "temp")
            if v is not None:
                out.append(Reading(_label(z / "type", z.name), v / 1000.0, f"sysfs:{z.name}"))
        return out

    def power(self) -> list[Reading]:
        out: list[Reading] = []
        for name, d in self._hwmons():
            for f in sorted(d.glob("power*_input")):  # microwatts
                v = _read_num(f)
                if v is not None:
                    idx = f.name.removesuffix("_input")
                    out.append(Reading(_label(d / f"{idx}_label", f"{name}.{idx}"), v / 1e6, f"hwmon:{name}"))
            if name.startswith("ina3221") or name.startswith("ina2"):
                for f in sorted(d.glob("in*_input")):
                    idx = re.sub(r"\D", "", f.name)
                    mv, ma = _read_num(f), _read_num(d / f"curr{idx}_input")
                    if mv is None or ma is None:
                        continue
                    rail = _label(d / f"in{idx}_label", f"in{idx}")
                    out.append(Reading(rail, mv * ma / 1e6, f"{name}:{rail}"))
        if out:
            return out
        now = time.monotonic()
        for z in sorted((self.root / "sys/class/powercap").glob("intel-rapl:*")):
            if z.name.count(":") != 1:
                continue
            e = _read_num(z / "energy_uj")  # often root-only; then unreadable -> skipped
            if e is None:
                continue
            last = self._rapl_last.get(z.name)
            self._rapl_last[z.name] = (now, e)
            if last and now > last[0] and e >= last[1]:
                out.append(Reading(_label(z / "name", z.name), (e - last[1]) / 1e6 / (now - last[0]),
                                   f"rapl:{z.name}"))
        if out:
            return out
        if self._tegra:
            return [Reading(k, v, f"tegrastats:{k}") for k, v in self._tegra.items()]
        return out

    def start_tegrastats(self) -> bool:
        """On Jetson boards without readable INA sysfs nodes, parse ``tegrastats`` output in a thread."""
        exe = shutil.which("tegrastats")
        if not exe or self._tegra_thread is not None:
            return False

        def loop() -> None:
            proc = subprocess.Popen([exe, "--interval", "1000"], stdout=subprocess.PIPE, text=True)
            assert proc.stdout is not None
            for line in proc.stdout:
                self._tegra.update(parse_tegrastats(line))

        self._tegra_thread = threading.Thread(target=loop, daemon=True, name="tegrastats")
        self._tegra_thread.start()
        return True

    def summary(self) -> dict[str, object]:
        t, p = self.temperatures(), self.power()
        return {"temperature": [r.__dict__ for r in t], "power": [r.__dict__ for r in p],
                "temperature_source": ", ".join(sorted({r.source for r in t})) or NOT_AVAILABLE,
                "power_source": ", ".join(sorted({r.source for r in p})) or NOT_AVAILABLE}


def parse_tegrastats(line: str) -> dict[str, float]:
    """``VDD_IN 4893mW/4893mW VDD_CPU_GPU_CV 1234mW/...`` -> {"VDD_IN": 4.893, ...} (watts, instantaneous)."""
    return {m.group(1): int(m.group(2)) / 1000.0 for m in re.finditer(r"(\w+) (\d+)mW/\d+mW", line)}

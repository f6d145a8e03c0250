"""The board install files agree with the agent's command line; sensors read a board's sysfs layout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from studio.agent.cli import build_parser
from studio.agent.sensors import NOT_AVAILABLE, Sensors, parse_tegrastats

ROOT = Path(__file__).resolve().parents[2]


def test_systemd_unit_uses_real_agent_flags() -> None:
    unit = (ROOT / "packaging/agent/studio-agent.service").read_text()
    exec_start = re.search(r"ExecStart=(.*?)\n(?!\s)", unit, re.S)
    assert exec_start
    flags = set(re.findall(r"(--[a-z-]+)", exec_start.group(1)))
    known = {a for act in build_parser()._actions for a in act.option_strings}
    assert flags and flags <= known, flags - known
    assert "studio-agent" in exec_start.group(1) and "Restart=on-failure" in unit


def test_install_script_is_valid_bash_and_uses_agent_extra() -> None:
    script = ROOT / "packaging/agent/install-agent.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    assert "[agent]" in text and "-m venv" in text and "studio-agent.service" in text
    out = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--trust" in out.stdout


def _write(p: Path, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def test_sensors_from_a_jetson_like_sysfs(tmp_path: Path) -> None:
    hw = tmp_path / "sys/class/hwmon/hwmon1"
    _write(hw / "name", "ina3221\n")
    _write(hw / "in1_label", "VDD_IN\n")
    _write(hw / "in1_input", "5000\n")  # mV
    _write(hw / "curr1_input", "1200\n")  # mA
    _write(tmp_path / "sys/class/thermal/thermal_zone0/type", "cpu-thermal\n")
    _write(tmp_path / "sys/class/thermal/thermal_zone0/temp", "48500\n")
    s = Sensors(tmp_path).summary()
    assert s["power"] == [{"sensor": "VDD_IN", "value": 6.0, "source": "ina3221:VDD_IN"}]
    assert s["temperature"][0]["value"] == 48.5 and s["temperature_source"] == "sysfs:thermal_zone0"
    empty = Sensors(tmp_path / "nothing").summary()
    assert empty["power_source"] == NOT_AVAILABLE and empty["temperature_source"] == NOT_AVAILABLE
    assert parse_tegrastats("RAM 2000/7000MB VDD_IN 4893mW/4893mW VDD_CPU_GPU_CV 812mW/812mW") == {
        "VDD_IN": 4.893, "VDD_CPU_GPU_CV": 0.812}

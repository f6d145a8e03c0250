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


# -- install-agent.sh installs a wheel (checked through --dry-run: no root, nothing written) -------------------

SCRIPT = ROOT / "packaging/agent/install-agent.sh"


def _dry_run(script: Path, tmp_path: Path, *args: str) -> tuple[int, list[list[str]], str]:
    """Run the installer with --dry-run in a temp prefix; the commands it would run, split into argv lists."""
    import shlex

    trust = tmp_path / "studio.pub"
    trust.write_text("ed25519 AAAA studio\n")
    prefix = tmp_path / "prefix"
    proc = subprocess.run(["bash", str(script), "--dry-run", "--trust", str(trust), "--prefix", str(prefix),
                           *args], capture_output=True, text=True, timeout=60)
    cmds = [shlex.split(line[2:]) for line in proc.stdout.splitlines() if line.startswith("+ '")]
    assert not prefix.exists(), "a dry run wrote into the prefix"
    return proc.returncode, cmds, proc.stdout + proc.stderr


def _pip(cmds: list[list[str]], verb: str) -> list[list[str]]:
    return [c[c.index("pip") + 2:] for c in cmds if "pip" in c and c[c.index("pip") + 1] == verb]


def test_install_script_from_a_checkout_builds_the_wheel_first(tmp_path: Path) -> None:
    import studio

    rc, cmds, out = _dry_run(SCRIPT, tmp_path)
    assert rc == 0, out
    prefix = tmp_path / "prefix"
    wheel = prefix / "wheels" / f"deployment_studio-{studio.__version__}-py3-none-any.whl"
    builds = _pip(cmds, "wheel")
    assert builds == [["--no-deps", str(ROOT), "-w", str(prefix / "wheels")]], builds
    installs = _pip(cmds, "install")
    assert [str(wheel) + "[agent]"] in installs and ["--no-deps", "--force-reinstall", str(wheel)] in installs
    # nothing installs the source tree itself, and every pip install happens in the prefix's venv
    assert not any(a.startswith(str(ROOT)) for args in installs for a in args), installs
    assert all(c[0] == str(prefix / "venv/bin/python") for c in cmds if "pip" in c)
    built = next(i for i, c in enumerate(cmds) if c[1:4] == ["-m", "pip", "wheel"])
    installed = next(i for i, c in enumerate(cmds) if c[1:4] == ["-m", "pip", "install"] and str(wheel) in c[-1])
    assert built < installed, "the wheel is built before it is installed"
    assert any(c[:2] == ["systemctl", "daemon-reload"] for c in cmds) and "dry run" in out


def test_install_script_shipped_next_to_a_wheel_installs_that_wheel(tmp_path: Path) -> None:
    dist = tmp_path / "release"
    dist.mkdir()
    for name in ("install-agent.sh", "studio-agent.service"):
        (dist / name).write_bytes((ROOT / "packaging/agent" / name).read_bytes())
    for v in ("0.1.0", "0.10.0", "0.9.1"):
        (dist / f"deployment_studio-{v}-py3-none-any.whl").write_bytes(b"")
    (dist / "constraints.txt").write_text("numpy==1.26.4\n")
    rc, cmds, out = _dry_run(dist / "install-agent.sh", tmp_path, "--constraints", str(dist / "constraints.txt"))
    assert rc == 0, out
    newest = dist / "deployment_studio-0.10.0-py3-none-any.whl"
    assert not _pip(cmds, "wheel")
    assert ["-c", str(dist / "constraints.txt"), f"{newest}[agent]"] in _pip(cmds, "install"), cmds
    assert any(c[-1] == "/etc/systemd/system/studio-agent.service" and c[-2] == str(dist / "studio-agent.service")
               for c in cmds)


def test_install_script_explicit_wheel_and_nothing_to_install(tmp_path: Path) -> None:
    whl = tmp_path / "w" / "deployment_studio-0.1.0-py3-none-any.whl"
    whl.parent.mkdir()
    whl.write_bytes(b"")
    rc, cmds, out = _dry_run(SCRIPT, tmp_path, "--wheel", str(whl))
    assert rc == 0 and not _pip(cmds, "wheel") and [f"{whl}[agent]"] in _pip(cmds, "install"), out
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "install-agent.sh").write_bytes(SCRIPT.read_bytes())
    rc, cmds, out = _dry_run(lonely / "install-agent.sh", tmp_path)
    assert rc == 2 and "no wheel to install" in out and not cmds
    rc, _, out = _dry_run(SCRIPT, tmp_path, "--wheel", str(tmp_path / "missing.whl"))
    assert rc == 2 and "no such file" in out

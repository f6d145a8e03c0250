"""The built wheel, installed with only the `agent` extra into a fresh venv, works from outside the checkout.

Targets, boards and SLA tiers come from the wheel's package data; a signed bundle is made with the wheel's
`studio` and served by the wheel's `studio-agent`; a wheel whose resources were deleted fails with exit 2 and
a message naming the missing folder and the fix (reinstall the wheel), never a traceback or an empty list.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from studio.inspect.profiles import BUILTIN_IDS
from studio.package.boards import BOARD_IDS
from tests.edge.helpers import make_mlp, mlp_ref
from tests.install.helpers import infer_body, signed_bundle, wheel_agent
from tests.install.venvs import WheelVenv, clean_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

RESOURCES = ["studio/resources/targets/tensorrt.yaml", "studio/resources/boards/rk3588.yaml",
             "studio/resources/sla/tiers.yaml", "studio/resources/themes/dark.qss",
             "studio/resources/themes/light.qss", "studio/resources/desktop/deployment-studio.svg",
             "studio/resources/desktop/icons/48x48/deployment-studio.png"]


def test_wheel_ships_resources_as_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert set(RESOURCES) <= names
    assert {f"studio/resources/targets/{t}.yaml" for t in BUILTIN_IDS} <= names
    assert {f"studio/resources/boards/{b}.yaml" for b in BOARD_IDS} <= names
    assert not any(n.startswith(("resources/", "tests/", "bench/")) for n in names)


@pytest.fixture(scope="module")
def agent_venv(venv_for) -> WheelVenv:  # type: ignore[no-untyped-def]
    return venv_for("agent")


def test_agent_venv_is_outside_the_checkout_and_light(agent_venv: WheelVenv, outside: Path) -> None:
    out = agent_venv.run_python("import studio, studio.core.paths as p; print(studio.__file__); "
                                "print(p.resources_dir())", cwd=outside)
    studio_file, res = out.stdout.split()
    site = agent_venv.site_packages()
    assert Path(studio_file).is_relative_to(site) and Path(res) == site / "studio" / "resources"
    for heavy in ("torch", "PySide6", "transformers", "tvm"):
        assert not agent_venv.importable(heavy), f"the agent extra pulls {heavy}"


def test_targets_inspect_boards_and_tiers_from_the_wheel(agent_venv: WheelVenv, outside: Path) -> None:
    listed = agent_venv.run("studio", "targets", "--json", cwd=outside)
    ids = [t["id"] for t in json.loads(listed.stdout)]
    assert set(BUILTIN_IDS) <= set(ids)
    model = make_mlp(outside / "mlp.onnx")
    rep = agent_venv.run("studio", "inspect", model, "--target", "all", "--format", "json", cwd=outside)
    verdicts = json.loads(rep.stdout)
    assert verdicts and "tensorrt" in json.dumps(verdicts)
    code = ("import json; from studio.package.boards import list_boards; from studio.telemetry.sla import "
            "load_tiers; print(json.dumps([[b.id for b in list_boards()], sorted(load_tiers()[0])]))")
    boards, tiers = json.loads(agent_venv.run_python(code, cwd=outside).stdout)
    assert set(BOARD_IDS) <= set(boards) and tiers == ["L1", "L2", "L3"]


def test_wheel_agent_serves_a_signed_bundle(agent_venv: WheelVenv, outside: Path) -> None:
    import httpx

    bundle, trust = signed_bundle(agent_venv, outside)
    agent = wheel_agent(agent_venv, outside, trust).start()
    try:
        agent_venv.run("studio", "deploy", bundle, "--agent", agent.url, "--token-file", agent.token_file,
                       "--json", cwd=outside)
        x = np.random.default_rng(0).random((2, 16), dtype=np.float32)
        r = httpx.post(f"{agent.url}/v2/models/tiny/infer", json=infer_body(x), timeout=30)
        assert r.status_code == 200, r.text
        out = r.json()["outputs"][0]
        np.testing.assert_allclose(np.array(out["data"], np.float32).reshape(out["shape"]), mlp_ref(x),
                                   rtol=1e-5, atol=1e-5)
    finally:
        agent.stop()
    assert "Traceback" not in (outside / "agent.log").read_text()


@pytest.fixture()
def broken_copy(agent_venv: WheelVenv, wheel: Path, tmp_path: Path) -> Path:
    """The wheel unpacked into a plain folder (a cheap second copy) whose resources/targets is deleted."""
    target = tmp_path / "site"
    subprocess.run([str(agent_venv.python), "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True, timeout=300, env=clean_env(agent_venv.path))
    shutil.rmtree(target / "studio" / "resources" / "targets")
    shutil.rmtree(target / "studio" / "resources" / "boards")
    return target


def test_wheel_missing_its_resources_says_so(agent_venv: WheelVenv, broken_copy: Path, outside: Path) -> None:
    env = {"PYTHONPATH": str(broken_copy)}
    model = make_mlp(outside / "mlp.onnx")
    located = agent_venv.run_python("import studio; print(studio.__file__)", cwd=outside, env=env).stdout
    assert Path(located.strip()).is_relative_to(broken_copy)
    for argv, folder in ((["targets"], "targets"), (["inspect", str(model)], "targets"),
                         (["package", str(model), "--board", "rk3588", "--key", "k", "--out", "b.tar"], "boards")):
        proc = agent_venv.run(agent_venv.python, "-m", "studio.cli.main", *argv, cwd=outside, env=env,
                              check=False)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and proc.stdout.strip() == "", (argv, proc.stdout)
        assert f"resources folder '{folder}/' is missing" in proc.stderr, proc.stderr
        assert str(broken_copy / "studio" / "resources" / folder) in proc.stderr
        assert "reinstall the wheel" in proc.stderr and "--force-reinstall" in proc.stderr

"""`studio inspect --verify`: per-node disagreements with both sources, the report's JSON, exit codes, folding
the tool's answer into a workspace profile, and verifiers that are missing or broken shown with their reason."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import verify_models as vm
import yaml

from studio.cli.main import main
from studio.inspect.api import inspect_model
from studio.verify.fold import fold, plan

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def range_bf16(tmp_path: Path) -> Path:
    return vm.save(vm.range_bf16_model(), tmp_path / "range.onnx")


def test_verify_text_shows_the_disagreement_and_both_sources(range_bf16: Path,
                                                             capsys: pytest.CaptureFixture) -> None:
    # tensorrt: no verifier can run here (rk3588 has one once the studio-rknn plugin is installed)
    assert main(["inspect", str(range_bf16), "-t", "ort-cpu", "-t", "tensorrt", "--verify", "-q"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("verification with the real toolchains"):]
    assert "ort-cpu: ort-cpu (onnxruntime " in section and "DISAGREES with the profile" in section
    assert "get_all_opkernel_def" in section  # the profile's source
    assert "range (Range): profile says unsupported" in section and "tool says supported" in section
    assert "tensorrt: no verifier; verdicts are from the list (" in section and "nvidia" in section.lower()


def test_verify_json_carries_the_results(range_bf16: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["inspect", str(range_bf16), "-t", "ort-cpu", "--verify", "-q", "-f", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    v = data["verification"]
    [c] = [c for c in v["comparisons"] if c["target"] == "ort-cpu"]
    assert c["static_fails"] and not c["tool_fails"] and not c["agrees"]
    assert c["disagreements"][0]["node"] == "range" and c["tool"].startswith("onnxruntime")
    [r] = [r for r in v["results"] if r["verifier"] == "ort-cpu"]
    assert r["nodes"] == [{"node": "range", "op_type": "Range", "verdict": "supported", "placement": "cpu",
                           "message": "", "domain": "ai.onnx"}]
    assert any(e["name"] == "ort-cpu" and e["ok"] for e in v["verifiers"])


def test_exit_code_follows_the_tool_where_it_ran(range_bf16: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture) -> None:
    args = ["inspect", str(range_bf16), "-t", "ort-cpu", "--fail-on", "unsupported", "-q", "-f", "json"]
    assert main(args) == 1  # the profile alone refuses Range on bfloat16
    assert main([*args, "--verify"]) == 0  # a real session builds: the tool wins
    bad = vm.save(vm.custom_op_model(), tmp_path / "c.onnx")
    assert main(["inspect", str(bad), "-t", "ort-cpu", "--fail-on", "unsupported", "--verify", "-q"]) == 1
    assert main(["inspect", str(bad), "-t", "ort-cpu", "--fold-into-profile", str(tmp_path)]) == 2
    capsys.readouterr()


def test_fold_plan_at_op_level() -> None:
    comp = {"disagreements": [
        {"node": "a", "op_type": "Mod", "domain": "ai.onnx", "static_verdict": "supported", "static_reason": "",
         "tool_verdict": "unsupported", "tool_message": "integral only"},
        {"node": "c", "op_type": "TopK", "domain": "ai.onnx", "static_verdict": "unsupported",
         "static_reason": "k must be constant", "tool_verdict": "supported", "tool_message": ""}]}
    res = {"nodes": [{"node": "a", "op_type": "Mod", "domain": "ai.onnx", "verdict": "unsupported", "message": "m1"},
                     {"node": "b", "op_type": "Mod", "domain": "ai.onnx", "verdict": "supported", "message": ""},
                     {"node": "c", "op_type": "TopK", "domain": "ai.onnx", "verdict": "supported", "message": ""}]}
    p = plan(comp, res)
    assert p[("ai.onnx", "Mod")] == ("risky", "m1")  # refused on one Mod of two: risky, with the tool's words
    assert p[("ai.onnx", "TopK")][0] == "supported"


def _fold_case(tmp_path: Path) -> tuple[str, Path, str] | None:
    if importlib.util.find_spec("studio_openvino") and importlib.util.find_spec("openvino"):
        return "openvino", vm.save(vm.float_mod_model(), tmp_path / "mod.onnx"), "Mod"
    return None


def test_fold_into_workspace_profile(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    case = _fold_case(tmp_path)
    if case is None:
        pytest.skip("needs the studio-openvino plugin (pip install -e plugins/studio-openvino)")
    target, model, op = case
    ws = tmp_path / "ws"
    assert main(["workspace", "init", str(ws)]) == 0 or (ws / "workspace.json").exists()
    assert main(["inspect", str(model), "-t", target, "--verify", "-q", "--fold-into-profile", str(ws)]) == 0
    err = capsys.readouterr().err
    written = ws / "targets" / f"{target}.yaml"
    assert f"folded 1 op(s) of {target} into {written}" in err
    data = yaml.safe_load(written.read_text())
    assert op in data["unsupported"]["ai.onnx"] and op not in data["supported"]["ai.onnx"]
    assert "Folded from openvino" in data["notes"] and data["id"] == target
    # the workspace profile now answers like the tool
    rep = inspect_model(model, [target], profile_dirs=[ws / "targets"])
    assert rep.node_verdicts[target]["mod"] == "unsupported"
    assert main(["inspect", str(model), "-t", target, "--workspace", str(ws), "--verify", "-q",
                 "--fail-on", "unsupported"]) == 1
    assert "agrees with the profile" in capsys.readouterr().out


def test_fold_skips_the_computed_ort_profile(range_bf16: Path, tmp_path: Path) -> None:
    from studio.verify.run import verify_report

    rep = inspect_model(range_bf16, ["ort-cpu"])
    verify_report(rep, range_bf16)
    res = fold(rep, "ort-cpu", tmp_path)
    assert res.path is None and "computed from the installed runtime" in res.skipped


BROKEN_MANIFEST = """
def manifest():
    return {"name": "broken-verifier", "provides": {"verifiers": ["broken-x"]}, "module": "brokenplug_impl"}
"""


def _broken_plugin_dir(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "brokenplug-0.1.dist-info").mkdir(parents=True)
    (site / "brokenplug-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\n"
                                                                "Version: 0.1\n")
    (site / "brokenplug-0.1.dist-info" / "entry_points.txt").write_text(
        "[studio.plugins]\nbroken-verifier = brokenplug_manifest:manifest\n")
    (site / "brokenplug_manifest.py").write_text(BROKEN_MANIFEST)
    (site / "brokenplug_impl.py").write_text("raise ImportError('the vendor SDK is not here')\n")
    return site


def test_broken_plugin_and_missing_tvm_are_shown_and_inspect_still_works(tmp_path: Path) -> None:
    site = _broken_plugin_dir(tmp_path)
    model = vm.save(vm.relu_model(), tmp_path / "relu.onnx")
    code = textwrap.dedent(f"""
        import sys
        sys.modules["tvm"] = None  # apache-tvm absent, as on a machine without the compile extra
        from studio.cli.main import main
        sys.exit(main(["inspect", {str(model)!r}, "-t", "ort-cpu", "-t", "tvm-relax", "--verify", "-q",
                       "--fail-on", "unsupported"]))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "broken-x: unavailable: plugin 'broken-verifier' failed: ImportError: the vendor SDK is not here" in out
    assert "tvm-relax for tvm-relax: unavailable: apache-tvm is not installed" in out
    assert "ort-cpu: ort-cpu (onnxruntime" in out and "accepts the model; agrees with" in out

"""The outside example plugin (plugins/studio-example), installed as a real distribution: its target, verifier
and command appear in the CLI and the registry, and nothing of it is imported before it is used."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

PROFILES = Path(__file__).resolve().parents[2] / "studio" / "inspect" / "profiles.py"
HOOKED = "target_sources" in PROFILES.read_text(encoding="utf-8")


def _rows(stdout: str) -> dict[str, dict]:
    return {r["name"]: r for r in json.loads(stdout)}


def test_studio_plugins_lists_example_with_its_contributions(studio, example_site: Path) -> None:
    proc = studio("plugins", "--json", sites=[example_site])
    assert proc.returncode == 0, proc.stderr
    rows = _rows(proc.stdout)
    ex = rows["studio-example"]
    assert (ex["distribution"], ex["version"], ex["builtin"], ex["error"]) == ("studio-example", "0.1.0", False, None)
    got = {(c["kind"], c["name"]): c["state"] for c in ex["contributions"]}
    assert got == {("targets", "example-npu"): "available", ("verifiers", "example-npu"): "available",
                   ("cli", "example-hello"): "available", ("pages", "example"): "available"}
    assert rows["builtin-targets"]["builtin"] and rows["builtin-targets"]["error"] is None
    assert rows["tvm-compile"]["builtin"]

    proc = studio("plugins", "--check", sites=[example_site])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    block = proc.stdout.split("studio-example", 1)[1]
    assert "studio-example 0.1.0" in block
    for kind, name in (("targets", "example-npu"), ("verifiers", "example-npu"), ("cli", "example-hello"),
                       ("pages", "example")):
        assert any(line.split()[:3] == [kind, name, "loaded"] for line in block.splitlines()), block


def test_command_in_help_and_runs(studio, example_site: Path, tiny_onnx: Path) -> None:
    proc = studio("--help", sites=[example_site])
    assert proc.returncode == 0, proc.stderr
    flat = " ".join(proc.stdout.split())
    assert "example-hello say what the example NPU would do with an ONNX model [plugin studio-example]" in flat

    proc = studio("example-hello", str(tiny_onnx), sites=[example_site])
    assert proc.returncode == 0, proc.stderr
    assert "tiny.onnx has 3 nodes, 1 would run on the example NPU" in proc.stdout
    assert "erf (Erf): unsupported" in proc.stdout and "sm (Softmax): risky" in proc.stdout

    proc = studio("example-hello", "/no/such/model.onnx", sites=[example_site])
    assert proc.returncode == 2 and "no such model file" in proc.stderr and "Traceback" not in proc.stderr

    proc = studio("example-hello", "--help", sites=[example_site])
    assert proc.returncode == 0 and "usage: studio example-hello" in proc.stdout

    proc = studio("example-hello", sites=[])  # not installed: an unknown command, as before
    assert proc.returncode == 2 and "unknown command 'example-hello'" in proc.stderr


LAZY = textwrap.dedent("""
    import sys
    from studio.cli.main import main
    try:
        rc = main(sys.argv[1:])
    finally:  # argparse's --help exits from inside main
        heavy = sorted(m for m in sys.modules if m.startswith('studio_example.') and m != 'studio_example.manifest')
        print('IMPORTED', heavy, file=sys.stderr)
    sys.exit(rc)
""")


def test_listing_imports_no_plugin_code(studio, example_site: Path) -> None:
    """`studio --help` and `studio plugins` read the manifest only; running the command imports its module."""
    for argv in (["--help"], ["plugins"], ["targets"] if HOOKED else ["plugins", "--json"]):
        proc = studio(*argv, sites=[example_site], code=LAZY)
        assert proc.returncode == 0, proc.stderr
        assert "IMPORTED []" in proc.stderr, (argv, proc.stderr)
    proc = studio("example-hello", "--help", sites=[example_site], code=LAZY)
    assert "IMPORTED ['studio_example.cli']" in proc.stderr


VERIFY = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from studio.core import plugins
    assert 'studio_example.plugin' not in sys.modules
    pairs = [(p.name, n) for p, n in plugins.providers('verifiers')]
    plugin, name = next((p, n) for p, n in plugins.providers('verifiers') if p.name == 'studio-example')
    v = plugin.load().verifier(name)            # how studio.verify's registry resolves one
    assert plugins.resolve('verifiers', name).target == 'example-npu'
    ok, tool = v.available()
    r = v.verify(Path(sys.argv[1]))
    c = plugins.contribution('verifiers', name)
    print(json.dumps({'pairs': pairs, 'ok': ok, 'tool': tool, 'result': r.to_dict(), 'state': c.state()[0]}))
""")


def test_verifier_through_the_registry(studio, example_site: Path, tiny_onnx: Path) -> None:
    proc = studio(str(tiny_onnx), sites=[example_site], code=VERIFY)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert ["studio-example", "example-npu"] in out["pairs"]
    assert out["ok"] and out["tool"] == "studio-example op table 0.1" and out["state"] == "loaded"
    res = out["result"]
    assert res["ran"] and res["verifier"] == "example-npu" and res["target"] == "example-npu"
    verdicts = {n["node"]: (n["verdict"], n["placement"]) for n in res["nodes"]}
    assert verdicts == {"relu": ("supported", "accelerator"), "sm": ("risky", "cpu"), "erf": ("unsupported", "failed")}


TARGETS = textwrap.dedent("""
    import json
    from studio.core.plugins import target_sources
    print(json.dumps([[c.plugin.name, c.name, str(v)] for c, v in target_sources()]))
""")


def test_target_resolves_from_the_installed_package(studio, example_site: Path) -> None:
    proc = studio(sites=[example_site], code=TARGETS)
    assert proc.returncode == 0, proc.stderr
    [[plugin, name, path]] = json.loads(proc.stdout)
    assert (plugin, name) == ("studio-example", "example-npu")
    assert Path(path) == example_site / "studio_example" / "targets" / "example-npu.yaml"


@pytest.mark.xfail(not HOOKED, strict=True,
                   reason="studio/inspect/profiles.py does not read plugin targets yet (target_sources hook)")
def test_target_in_studio_targets_and_inspect(studio, example_site: Path, tiny_onnx: Path) -> None:
    proc = studio("targets", "--json", sites=[example_site])
    assert proc.returncode == 0, proc.stderr
    ids = [t["id"] for t in json.loads(proc.stdout)]
    assert "example-npu" in ids and "ort-cpu" in ids
    proc = studio("inspect", str(tiny_onnx), "--target", "example-npu", sites=[example_site])
    assert "example-npu" in proc.stdout and "Erf is not in Example NPU" in proc.stdout, proc.stdout + proc.stderr

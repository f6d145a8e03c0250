"""An outside plugin that fails to import (plugins/studio-broken-example) is shown with its error, and the rest
of the studio works: the built-in commands, the other plugins, `studio --help`."""

from __future__ import annotations

import json
from pathlib import Path


def test_plugins_shows_both_failures_and_exits_0(studio, example_site: Path, broken_site: Path) -> None:
    proc = studio("plugins", "--json", sites=[example_site, broken_site])
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in json.loads(proc.stdout)}
    # the manifest module raises on import: listed under its entry-point name with that error
    assert "vendor SDK 'libexample_npu' is not installed" in rows["broken-manifest"]["error"]
    assert rows["broken-manifest"]["distribution"] == "studio-broken-example"
    # a valid manifest: listed with its contributions, not imported yet
    assert rows["broken-example"]["error"] is None
    assert {c["state"] for c in rows["broken-example"]["contributions"]} == {"available"}
    assert rows["studio-example"]["error"] is None and rows["builtin-targets"]["error"] is None

    proc = studio("plugins", "--check", sites=[example_site, broken_site])
    assert proc.returncode == 1, proc.stdout + proc.stderr  # --check says something failed
    lines = proc.stdout.splitlines()
    head = next(ln for ln in lines if ln.split()[1:2] == ["broken-example"])
    assert head.startswith("ERR") and "libexample_npu.so: cannot open shared object file" in head
    assert any(ln.split()[:3] == ["cli", "broken-hello", "error"] for ln in lines)
    assert any(ln.split()[:3] == ["cli", "example-hello", "loaded"] for ln in lines)
    assert "Traceback" not in proc.stdout + proc.stderr


def test_broken_command_fails_cleanly_and_the_rest_works(studio, example_site: Path, broken_site: Path,
                                                         tiny_onnx: Path) -> None:
    sites = [example_site, broken_site]
    proc = studio("--help", sites=sites)
    assert proc.returncode == 0 and "broken-hello" in proc.stdout and "example-hello" in proc.stdout

    proc = studio("broken-hello", sites=sites)
    assert proc.returncode == 2
    assert "plugin 'broken-example' cannot provide cli 'broken-hello'" in proc.stderr
    assert "libexample_npu.so" in proc.stderr and "studio plugins --check" in proc.stderr
    assert "Traceback" not in proc.stderr

    for argv in (["example-hello", str(tiny_onnx)], ["targets"], ["inspect", str(tiny_onnx), "--target", "ort-cpu"],
                 ["--version"]):
        proc = studio(*argv, sites=sites)
        assert proc.returncode == 0, (argv, proc.stdout[-2000:], proc.stderr[-2000:])


def test_target_and_verifier_of_a_broken_plugin_are_skipped(studio, broken_site: Path) -> None:
    code = ("import json\nfrom studio.core import plugins\n"
            "srcs = [c.name for c, _ in plugins.target_sources()]\n"
            "try:\n    plugins.resolve('verifiers', 'broken-npu')\n    err = None\n"
            "except plugins.PluginError as exc:\n    err = exc.render()\n"
            "print(json.dumps({'targets': srcs, 'error': err, 'state': plugins.find('broken-example').state(),\n"
            "                  'verifiers': [n for _, n in plugins.providers('verifiers')]}))\n")
    proc = studio(sites=[broken_site], code=code)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["targets"] == []
    assert "cannot provide verifiers 'broken-npu'" in out["error"] and "libexample_npu.so" in out["error"]
    assert out["state"][0] == "error" and "broken-npu" not in out["verifiers"]

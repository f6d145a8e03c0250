"""The environment's checks and the dynamic-shape refusal: no toolkit needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from studio_rknn import env as envmod
from studio_rknn.manifest import manifest
from studio_rknn.plugin import verifier

from studio.core.errors import InputError


def test_requirements_are_pinned_and_torch_is_the_cpu_build() -> None:
    reqs = dict(envmod.requirements())
    assert reqs["rknn-toolkit2"] == "2.5.0" and reqs["torch"] == "2.13.0" and reqs["onnx"] == "1.18.0"
    assert all(v for v in reqs.values())


def test_env_location_is_outside_the_clone_and_overridable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(envmod.ENV_VAR, raising=False)
    assert "rknn-2.5.0" in str(envmod.env_dir()) and not str(envmod.env_dir()).startswith(str(Path.cwd()))
    monkeypatch.setenv(envmod.ENV_VAR, str(tmp_path / "e"))
    assert envmod.env_dir() == tmp_path / "e"


def _fake_env(root: Path, *, stamp: bool = True, rknn: bool = True) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").write_text("")
    site = root / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    for dist, ver in envmod.requirements():
        (site / f"{dist.replace('-', '_')}-{ver}.dist-info").mkdir()
    if rknn:
        (site / "rknn" / "api").mkdir(parents=True)
        (site / "rknn" / "api" / "__init__.py").write_text("")
    if stamp:
        (root / envmod.STAMP).write_text(json.dumps({"requirements": envmod.requirements_hash(),
                                                     "versions": {"rknn-toolkit2": "2.5.0"}}))
    return root


def test_missing_incomplete_and_broken_envs_are_unavailable_with_the_fix(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert envmod.check_env(_fake_env(tmp_path / "whole")).ok
    cases = {"missing": tmp_path / "nothing", "incomplete": _fake_env(tmp_path / "half", stamp=False),
             "broken": _fake_env(tmp_path / "gone", rknn=False)}
    for word, path in cases.items():
        status = envmod.check_env(path)
        assert not status.ok and word in status.reason and "studio-rknn-env create" in status.reason
    monkeypatch.setenv(envmod.ENV_VAR, str(cases["broken"]))
    ok, reason = verifier("rknn-rk3588").available()
    assert not ok and "rknn package is gone" in reason and "studio-rknn-env create" in reason


def test_broken_env_verify_does_not_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          models: dict[str, Path]) -> None:
    monkeypatch.setenv(envmod.ENV_VAR, str(tmp_path / "none"))
    res = verifier("rknn-rk3588").verify(models["mlp"])
    assert not res.ran and "studio-rknn-env create" in res.error and res.shapes == {"x": [1, 16]}


def test_dynamic_inputs_without_shapes_are_refused_by_name(models: dict[str, Path]) -> None:
    with pytest.raises(InputError) as ei:
        verifier("rknn-rk3588").verify(models["dynamic"])
    err = ei.value
    assert "x [N,16]" in err.message and "mask [1,S]" in err.message and err.offending == "x, mask"
    # every input named with an example: its own static dims, 1 for a first dynamic dim and 8 after
    assert "--shape x=1,16 --shape mask=1,8" in err.hint and "studio fix MODEL --static" in err.hint
    with pytest.raises(InputError, match="does not have"):
        verifier("rknn-rk3588").verify(models["dynamic"], {"nope": [1]})


def test_manifest_declares_one_verifier_per_platform() -> None:
    m = manifest()
    assert list(m["provides"]["verifiers"]) == ["rknn-rk3588", "rknn-rk3576", "rknn-rk3566"]
    assert m["provides"]["verifiers"]["rknn-rk3588"]["target"] == "rk3588"  # read by `studio inspect`
    assert m["module"] == "studio_rknn.plugin"
    with pytest.raises(InputError):
        verifier("rknn-rk9999")

"""`studio triton export-kserve`: manifests for the tiny-clip repository through the real kserve / kubernetes client
models (kserve 0.21 in its cached environment: it pins psutil<6), bad input, and --apply with no cluster here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from studio.core.errors import InputError, ValidationError
from studio.triton.kserve_manifest import KServeOptions, build_manifests, write_manifests
from studio.triton.kserve_validate import validate_documents
from studio.triton.repo_builder import BuildOptions, build_repo
from tests.serving import tiny_models as tm

URI = "gs://studio-models/clip/repo"


@pytest.fixture(scope="module")
def clip_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kserve")
    repo = root / "repo"
    build_repo(BuildOptions(tm.split_export(root / "export"), repo, "clip"))
    return repo


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An environment with no kubeconfig and no service account: what this machine is."""
    from studio.triton.kserve_env import ENV_VAR, env_dir

    monkeypatch.setenv(ENV_VAR, str(env_dir()))  # the cached kserve env stays found under the new HOME
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    import os

    return dict(os.environ)


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "studio.cli.main", "triton", "export-kserve", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_tiny_clip_manifests_pass_the_client_models_and_round_trip(clip_repo: Path) -> None:
    report = build_manifests(KServeOptions(clip_repo, "clip", URI, sla_tier="L1"))
    runtime, service = report.documents
    assert (runtime["kind"], service["kind"]) == ("ServingRuntime", "InferenceService")
    pred = service["spec"]["predictor"]
    assert pred["model"]["modelFormat"]["name"] == "triton" and pred["model"]["storageUri"] == URI
    assert pred["model"]["runtime"] == runtime["metadata"]["name"] == "clip-triton"
    assert (pred["minReplicas"], pred["maxReplicas"], pred["scaleMetric"], pred["scaleTarget"]) == (1, 4,
                                                                                                  "concurrency", 4)
    assert sorted(report.models) == ["clip", "clip_text", "clip_text_pipeline", "clip_text_tokenizer",
                                     "clip_vision"]
    validation = validate_documents(report.documents)
    assert validation.ok, validation.errors
    assert [d["model"] for d in validation.documents] == ["V1alpha1ServingRuntime", "V1beta1InferenceService"]
    assert "kserve 0.21" in validation.source and "client-side" in validation.source
    # the offline tier scales to zero and has more memory headroom than real-time
    l3 = build_manifests(KServeOptions(clip_repo, "clip", URI, sla_tier="L3")).documents[1]["spec"]["predictor"]
    assert l3["minReplicas"] == 0
    mem = [int(d["model"]["resources"]["limits"]["memory"][:-2]) for d in (pred, l3)]
    assert mem[0] > mem[1]


def test_the_models_catch_a_broken_document(clip_repo: Path) -> None:
    docs = build_manifests(KServeOptions(clip_repo, "clip", URI)).documents
    docs[1]["spec"]["predictor"]["minReplicas"] = "one"
    docs[1]["spec"]["predictor"]["model"]["storageURI"] = URI
    del docs[1]["spec"]["predictor"]["model"]["modelFormat"]
    errors = validate_documents(docs).errors
    assert any("minReplicas: expected int" in e for e in errors), errors
    assert any("storageURI: not a field of V1beta1ModelSpec" in e for e in errors), errors
    assert any("model_format" in e for e in errors), errors


@pytest.mark.parametrize("uri, words", [("ftp://host/repo", "ftp://"), ("/data/repo", "no scheme"),
                                        ("s3:///repo", "names no bucket"), ("pvc://My_Claim/repo", "My_Claim")])
def test_bad_storage_uri_is_a_clear_error_and_nothing_is_written(clip_repo: Path, tmp_path: Path, uri: str,
                                                                  words: str) -> None:
    with pytest.raises(InputError, match=words) as err:
        build_manifests(KServeOptions(clip_repo, "clip", uri))
    assert err.value.offending == "--storage-uri" and "gs://" in err.value.hint and "pvc://" in err.value.hint
    proc = _cli(str(clip_repo), "--name", "clip", "--storage-uri", uri, cwd=tmp_path)
    assert proc.returncode != 0 and words in proc.stderr and "hf://" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_missing_model_empty_repo_and_unknown_tier(clip_repo: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="'siglip' is not in repository .* clip_vision"):
        build_manifests(KServeOptions(clip_repo, "siglip", URI))
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no model"):
        build_manifests(KServeOptions(tmp_path / "empty", "clip", URI))
    with pytest.raises(InputError, match="does not exist"):
        build_manifests(KServeOptions(tmp_path / "nowhere", "clip", URI))
    with pytest.raises(InputError, match="unknown SLA tier 'L9'") as err:
        build_manifests(KServeOptions(clip_repo, "clip", URI, sla_tier="L9"))
    assert "L1" in err.value.hint
    out = tmp_path / "out"
    out.mkdir()
    proc = _cli(str(clip_repo), "--name", "clip", "--storage-uri", URI, "--sla-tier", "L9", cwd=out)
    assert proc.returncode != 0 and "unknown SLA tier 'L9'" in proc.stderr
    assert list(out.iterdir()) == []


def test_a_repository_that_fails_its_check_is_refused(clip_repo: Path, tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "repo"
    shutil.copytree(clip_repo, repo)
    (repo / "clip_vision" / "config.pbtxt").write_text("name: 'clip_vision' bogus_field: 1\n")
    with pytest.raises(ValidationError, match="fails `studio triton check`"):
        build_manifests(KServeOptions(repo, "clip", URI))


def test_cli_writes_once_and_apply_without_kubeconfig_fails_clearly(clip_repo: Path, tmp_path: Path,
                                                                    no_cluster: dict[str, str]) -> None:
    proc = _cli(str(clip_repo), "--name", "clip", "--storage-uri", URI, "--apply", env=no_cluster, cwd=tmp_path)
    assert proc.returncode != 0
    assert "no Kubernetes cluster to apply to" in proc.stderr and "KUBECONFIG" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # refused before anything was written

    proc = _cli(str(clip_repo), "--name", "clip", "--storage-uri", URI, "--sla-tier", "L2", "--dry-run",
                env=no_cluster, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "client-side validation only" in proc.stdout and "kserve 0.21" in proc.stdout
    docs = list(yaml.safe_load_all((tmp_path / "clip-kserve.yaml").read_text()))
    assert [d["kind"] for d in docs] == ["ServingRuntime", "InferenceService"]
    assert docs[1]["spec"]["predictor"]["maxReplicas"] == 8 and docs[1]["metadata"]["labels"]["studio.sla-tier"] == "L2"
    assert validate_documents(docs).ok  # what landed on disk is what was validated
    assert [p.name for p in tmp_path.iterdir()] == ["clip-kserve.yaml"]  # no temp file left


def test_write_is_atomic_over_an_old_file(clip_repo: Path, tmp_path: Path) -> None:
    target = tmp_path / "m.yaml"
    target.write_text("old")
    report = build_manifests(KServeOptions(clip_repo, "clip", URI))
    write_manifests(report, target)
    assert report.path == str(target) and len(list(yaml.safe_load_all(target.read_text()))) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["m.yaml"]

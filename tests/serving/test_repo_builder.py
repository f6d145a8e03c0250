"""Repository builder and checker (no server): configs from real ONNX signatures, protobuf round trips, bad repos."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from studio.core.errors import InputError
from studio.triton import config as tc
from studio.triton.client import parse_url
from studio.triton.inputs import prepare_inputs
from studio.triton.metrics import snapshot
from studio.triton.repo_builder import BuildOptions, build_repo
from studio.triton.repo_check import check_repo
from tests.serving import tiny_models as tm


@pytest.fixture()
def mlp_file(tmp_path: Path) -> Path:
    return tm.mlp(tmp_path / "src" / "mlp.onnx")


def test_onnxruntime_config_from_real_signature_round_trips(mlp_file: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_repo(BuildOptions(mlp_file, repo, "mlp", dynamic_batching=True, preferred_batch_sizes=[2, 4],
                            max_queue_delay_us=100, instance_count=2, warmup=True))
    text = (repo / "mlp" / "config.pbtxt").read_text()
    cfg = tc.parse_text(text)
    assert cfg.platform == "onnxruntime_onnx" and cfg.max_batch_size == 8
    assert [(i.name, tc.type_name(i.data_type), list(i.dims)) for i in cfg.input] == [("x", "TYPE_FP32", [16])]
    assert [(o.name, list(o.dims)) for o in cfg.output] == [("y", [8])]
    assert list(cfg.dynamic_batching.preferred_batch_size) == [2, 4]
    assert cfg.dynamic_batching.max_queue_delay_microseconds == 100
    assert cfg.instance_group[0].count == 2 and cfg.model_warmup[0].inputs["x"].random_data
    assert tc.to_text(cfg) == text  # printed by the same protobuf: a fixed point
    assert (repo / "mlp" / "1" / "model.onnx").is_file()
    report = check_repo(repo)
    assert report.ok, [f.render() for f in report.findings]


def test_fixed_batch_dim_and_dynamic_dims(tmp_path: Path) -> None:
    fixed = tm.mlp(tmp_path / "fixed.onnx", batch=1)
    r = build_repo(BuildOptions(fixed, tmp_path / "repo", "fixed"))
    cfg = tc.load_config(tmp_path / "repo" / "fixed" / "config.pbtxt")
    assert cfg.max_batch_size == 0 and list(cfg.input[0].dims) == [1, 16]
    assert r.warnings and "no dynamic batch dim" in r.warnings[0]
    with pytest.raises(InputError) as err:
        build_repo(BuildOptions(fixed, tmp_path / "repo2", "fixed", max_batch_size=8))
    assert err.value.offending == "x"
    text = tm.text_encoder(tmp_path / "text.onnx")
    build_repo(BuildOptions(text, tmp_path / "repo", "text", max_batch_size=4))
    cfg = tc.load_config(tmp_path / "repo" / "text" / "config.pbtxt")
    assert [(i.name, tc.type_name(i.data_type), list(i.dims)) for i in cfg.input] == [
        ("input_ids", "TYPE_INT64", [-1]), ("attention_mask", "TYPE_INT64", [-1])]
    assert not (tmp_path / "repo2").exists() or not any((tmp_path / "repo2").iterdir())


def test_versions_are_kept_and_conflicts_refused(mlp_file: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_repo(BuildOptions(mlp_file, repo, "mlp", flavor="python"))
    v2 = tm.mlp(tmp_path / "v2.onnx", seed=5)
    r = build_repo(BuildOptions(v2, repo, "mlp", flavor="python"))
    assert r.models[0].version == 2
    assert sorted(p.name for p in (repo / "mlp").iterdir() if p.is_dir()) == ["1", "2"]
    assert (repo / "mlp" / "2" / "model.py").is_file()
    env = json.loads((repo / "mlp" / "studio_env.json").read_text())
    assert any(Path(p, "numpy").is_dir() for p in env["site_packages"])
    with pytest.raises(InputError, match="already exists"):
        build_repo(BuildOptions(v2, repo, "mlp", version=1))
    assert check_repo(repo).ok


def test_split_export_gets_router_parts_and_tokenizer_pipeline(tmp_path: Path) -> None:
    folder = tm.split_export(tmp_path / "export")
    repo = tmp_path / "repo"
    report = build_repo(BuildOptions(folder, repo, "clip"))
    kinds = {m.name: m.kind for m in report.models}
    assert kinds == {"clip_text": "onnx", "clip_vision": "onnx", "clip": "router",
                     "clip_text_tokenizer": "tokenizer", "clip_text_pipeline": "pipeline"}
    router = tc.load_config(repo / "clip" / "config.pbtxt")
    assert router.backend == "python" and all(i.optional for i in router.input)
    routes = json.loads(tc.get_parameter(router, "routes"))
    assert routes["vision"]["model"] == "clip_vision" and routes["text"]["inputs"] == ["input_ids", "attention_mask"]
    pipe = tc.load_config(repo / "clip_text_pipeline" / "config.pbtxt")
    assert [s.model_name for s in pipe.ensemble_scheduling.step] == ["clip_text_tokenizer", "clip_text"]
    assert (repo / "clip_text_tokenizer" / "1" / "tokenizer.json").is_file()
    assert (repo / "clip" / "preprocessor_config.json").is_file()
    report = check_repo(repo)
    assert report.ok, [f.render() for f in report.findings]


def _finding(report, field_part: str):  # type: ignore[no-untyped-def]
    return [f for f in report.findings if field_part in f.field and f.severity == "error"]


def test_check_reports_wrong_dim_dtype_missing_version_with_file_and_field(mlp_file: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name in ("dim", "dtype", "noversion", "batch"):
        build_repo(BuildOptions(mlp_file, repo, name))
    f = repo / "dim" / "config.pbtxt"
    f.write_text(f.read_text().replace("dims: 16", "dims: 15"))
    f = repo / "dtype" / "config.pbtxt"
    f.write_text(f.read_text().replace("TYPE_FP32", "TYPE_FP16", 1))
    shutil.rmtree(repo / "noversion" / "1")
    f = repo / "batch" / "config.pbtxt"
    f.write_text(f.read_text().replace("dims: 16", "dims: -1\n  dims: 16"))
    report = check_repo(repo)
    by_model = {m: [x for x in report.errors if x.model == m] for m in ("dim", "dtype", "noversion", "batch")}
    assert by_model["dim"][0].field == "input[0].dims[0]" and by_model["dim"][0].file.endswith("dim/config.pbtxt")
    assert "15" in by_model["dim"][0].message and "16" in by_model["dim"][0].message
    assert by_model["dtype"][0].field == "input[0].data_type" and "TYPE_FP32" in by_model["dtype"][0].message
    assert by_model["noversion"][0].field == "version folders"
    assert by_model["noversion"][0].file.endswith("noversion")
    assert by_model["batch"][0].field == "input[0].dims"
    rc = subprocess.run([sys.executable, "-m", "studio.cli.main", "triton", "check", "--repo", str(repo)],
                        capture_output=True, text=True, timeout=120)
    assert rc.returncode == 1
    assert "[input[0].dims[0]]" in rc.stdout and "FAILED" in rc.stdout


def test_check_reports_ensemble_wiring_and_syntax(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    build_repo(BuildOptions(tm.split_export(tmp_path / "export"), repo, "clip"))
    f = repo / "clip_text_pipeline" / "config.pbtxt"
    f.write_text(f.read_text().replace('value: "_tok_attention_mask"\n', 'value: "_tok_mask_typo"\n', 1))
    (repo / "broken").mkdir()
    (repo / "broken" / "config.pbtxt").write_text('name: "broken"\nmax_batch_sizes: 4\n')
    report = check_repo(repo)
    wiring = [x for x in report.errors if x.model == "clip_text_pipeline"]
    assert wiring and wiring[0].field.startswith("ensemble_scheduling.step[")
    assert any("'_tok_attention_mask' is neither" in x.message for x in wiring)
    assert any(x.model == "broken" and x.field == "syntax" and "max_batch_sizes" in x.message for x in report.errors)


def test_bad_input_exits_nonzero_without_traceback(tmp_path: Path) -> None:
    rc = subprocess.run([sys.executable, "-m", "studio.cli.main", "triton", "build-repo", str(tmp_path / "no.onnx"),
                         "--repo", str(tmp_path / "r"), "--name", "m"], capture_output=True, text=True, timeout=120)
    assert rc.returncode == 2 and "does not exist" in rc.stderr and "Traceback" not in rc.stderr
    assert not (tmp_path / "r").exists()


def test_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from studio.core.errors import ConnectionFailed
    from studio.triton.client import TritonClient
    from tests.edge.helpers import free_port

    port = free_port()
    for url in (f"http://127.0.0.1:{port}", f"grpc://127.0.0.1:{port}"):
        with pytest.raises(ConnectionFailed) as err:
            TritonClient(url, timeout=2).info()
        assert err.value.offending == url
    rc = subprocess.run([sys.executable, "-m", "studio.cli.main", "triton", "status", "--url",
                         f"http://127.0.0.1:{port}", "--timeout", "2"], capture_output=True, text=True, timeout=60)
    assert rc.returncode != 0 and "did not answer" in rc.stderr and "Traceback" not in rc.stderr


def test_metrics_parser_reports_cpu_and_not_available_gpu() -> None:
    text = "\n".join([
        "# HELP nv_cpu_utilization CPU utilization rate [0.0 - 1.0]", "# TYPE nv_cpu_utilization gauge",
        "nv_cpu_utilization 0.25", "nv_cpu_memory_used_bytes 1048576", "nv_cpu_memory_total_bytes 4194304",
        'nv_inference_request_success{model="mlp",version="1"} 7',
        'nv_inference_request_failure{model="mlp",reason="REJECTED",version="1"} 1',
        'nv_inference_request_failure{model="mlp",reason="BACKEND",version="1"} 2',
        'nv_inference_request_duration_us{model="mlp",version="1"} 700'])
    snap = snapshot(text)
    assert snap.cpu_utilization == 0.25 and snap.describe()["CPU memory used"] == "1.0 MiB"
    assert snap.describe()["GPU power"] == "not available"
    m = snap.model("mlp")[0]
    assert (m.success, m.failure, m.avg_request_us) == (7, 3, 100)
    gpu = snapshot('nv_gpu_power_usage{gpu_uuid="GPU-1"} 71.5\nnv_gpu_utilization{gpu_uuid="GPU-1"} 0.5')
    assert gpu.describe()["GPU power"] == "71.5 W" and gpu.describe()["GPU utilisation"] == "50.0 %"


def test_prepare_inputs_from_files(tmp_path: Path) -> None:
    from PIL import Image

    cfg = {"max_batch_size": 8, "input": [
        {"name": "pixel_values", "data_type": "TYPE_FP32", "dims": [3, 8, 8]},
        {"name": "input_ids", "data_type": "TYPE_INT64", "dims": [-1]},
        {"name": "attention_mask", "data_type": "TYPE_INT64", "dims": [-1]}]}
    img = tmp_path / "x.png"
    Image.fromarray(np.full((20, 30, 3), 255, np.uint8)).save(img)
    tok = tm.tokenizer_json(tmp_path / "tokenizer.json")
    proc = tmp_path / "preprocessor_config.json"
    proc.write_text(json.dumps({"image_mean": [0.5] * 3, "image_std": [0.5] * 3}))
    feed = prepare_inputs(cfg, image=img, text="a photo of a cat", tokenizer=tok, processor=proc)
    assert feed["pixel_values"].shape == (1, 3, 8, 8) and np.allclose(feed["pixel_values"], 1.0)
    ids, mask = tm.tokenize("a photo of a cat")
    assert np.array_equal(feed["input_ids"], ids) and np.array_equal(feed["attention_mask"], mask)
    with pytest.raises(InputError, match="tokenizer"):
        prepare_inputs(cfg, text="a cat")
    text_cfg = {"max_batch_size": 8, "input": [{"name": "TEXT", "data_type": "TYPE_STRING", "dims": [1]}]}
    assert prepare_inputs(text_cfg, text="red dog")["TEXT"].tolist() == [[b"red dog"]]
    assert parse_url("grpcs://h:9") == ("h:9", "grpc", True) and parse_url("h") == ("h:8000", "http", False)


def test_cli_signs_versions_and_installs_trust(mlp_file: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # noqa: ANN001
    from studio.cli.main import main
    from studio.package.keys import KeyStore

    keys = tmp_path / "keys"
    KeyStore(keys).generate("release", "pw")
    monkeypatch.setenv("STUDIO_KEY_PASSPHRASE", "pw")
    repo = tmp_path / "repo"
    rc = main(["triton", "build-repo", str(mlp_file), "--repo", str(repo), "--name", "m", "--flavor", "python",
               "--sign", "release", "--keys-dir", str(keys), "--trust", str(keys / "release.pub")])
    assert rc == 0
    version = repo / "m" / "1"
    manifest = json.loads((version / "manifest.json").read_text())
    assert {f["path"] for f in manifest["files"]} == {"model.onnx", "model.py"}  # the code is signed too
    assert list((repo / "m" / "trusted_keys").glob("*.pub"))
    cfg = tc.load_config(repo / "m" / "config.pbtxt")
    assert cfg.parameters["studio_verify"].string_value == "manifest"
    assert check_repo(repo).ok
    from studio.edge.verify import verify_directory

    verify_directory(version, repo / "m" / "trusted_keys", allow_extra=["__pycache__/*"])
    capsys.readouterr()
    rc = main(["triton", "build-repo", str(mlp_file), "--repo", str(tmp_path / "r2"), "--name", "m",
               "--trust", str(keys / "release.pub")])
    assert rc == 2 and "--trust without --sign" in capsys.readouterr().err
    assert not (tmp_path / "r2").exists()


def test_external_data_is_copied_and_a_missing_data_file_is_named(tmp_path: Path) -> None:
    """The layout past 2 GB (graph + data file): the repository carries the data file, its check passes; a version
    whose data file is gone is an error naming it, and a build from a model without its data file writes nothing."""
    from studio.core.errors import ModelError
    from tests.edge.helpers import make_mlp

    src = make_mlp(tmp_path / "src" / "tiny.onnx", external_data=True)
    repo = tmp_path / "repo"
    build_repo(BuildOptions(src, repo, "tiny"))
    assert (repo / "tiny" / "1" / "tiny.onnx.data").read_bytes() == src.with_name("tiny.onnx.data").read_bytes()
    assert check_repo(repo).ok
    (repo / "tiny" / "1" / "tiny.onnx.data").unlink()
    report = check_repo(repo)
    assert not report.ok and "tiny.onnx.data of model.onnx is missing" in report.errors[0].message
    src.with_name("tiny.onnx.data").unlink()
    with pytest.raises(ModelError, match="tiny.onnx.data of tiny.onnx is missing"):
        build_repo(BuildOptions(src, tmp_path / "repo2", "tiny"))
    assert not (tmp_path / "repo2" / "tiny" / "1").exists()

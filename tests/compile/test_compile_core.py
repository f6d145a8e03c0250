"""Compile for the host and for aarch64, verify against ONNX Runtime, load the artifact back."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from conftest import needs_tvm

from studio.compile.api import CompileOptions, CompileReport, compile_model
from studio.core.errors import InputError, TargetError
from studio.edge.elf import elf_machine, file_machines

pytestmark = needs_tvm


@pytest.fixture(scope="module")
def cnn_llvm(cnn_onnx: Path, tmp_path_factory: pytest.TempPathFactory) -> CompileReport:
    out = tmp_path_factory.mktemp("cnn-llvm") / "out"
    return compile_model(CompileOptions(model=cnn_onnx, target="llvm", out=out, latency_runs=5))


@pytest.fixture(scope="module")
def cnn_aarch64(cnn_onnx: Path, tmp_path_factory: pytest.TempPathFactory) -> CompileReport:
    out = tmp_path_factory.mktemp("cnn-a64") / "out"
    return compile_model(CompileOptions(model=cnn_onnx, target="aarch64", out=out, latency_runs=3))


def test_cnn_compiles_for_llvm_and_matches_ort(cnn_llvm: CompileReport) -> None:
    rep = cnn_llvm
    assert rep.status == "succeeded", rep.summary()
    out = Path(rep.out_dir)
    names = {a.path for a in rep.artifacts}
    assert {"model.so", "params.bin", "compiled.json", "compile_report.json"} <= names
    assert file_machines(out / "model.so") == {"model.so": "x86_64"}
    assert rep.parity.status == "passed" and rep.parity.mode == "artifact"
    assert rep.parity.outputs[0].output == "logits" and rep.parity.outputs[0].max_abs < 1e-4
    assert rep.latency.runs == 5 and rep.latency.tvm_ms_median > 0 and rep.latency.ort_ms_median > 0
    assert rep.input_shapes == {"x": [1, 3, 16, 16]}
    assert rep.dynamic_dims == [{"input": "x", "axis": 0, "dim": "batch", "value": 1, "source": "batch default"}]
    assert rep.target_json == {"kind": "llvm"}
    saved = json.loads((out / "compile_report.json").read_text())
    assert saved["schema_version"] == 1 and saved["status"] == "succeeded"
    assert saved["parity"]["outputs"][0]["passed"] is True
    assert not list(out.parent.glob(".out.*")), "temp folders left behind"


def test_tvm_runner_loads_artifact_and_matches_ort_on_new_input(cnn_llvm: CompileReport, cnn_onnx: Path) -> None:
    from studio.compile.runner import TVMRunner

    x = np.random.default_rng(7).standard_normal((1, 3, 16, 16)).astype(np.float32)
    ref = ort.InferenceSession(str(cnn_onnx)).run(None, {"x": x})[0]
    with TVMRunner(cnn_llvm.out_dir) as r:
        got = r.infer({"x": x})["logits"]
        assert r.input_metadata() == {"x": ("float32", [1, 3, 16, 16])}
        assert r.signature_state == "unsigned (no manifest)"
    np.testing.assert_allclose(got, ref, atol=1e-5, rtol=1e-4)
    assert r.last_inference_time is not None


def test_aarch64_cross_build_writes_aarch64_elf_objects(cnn_aarch64: CompileReport) -> None:
    rep = cnn_aarch64
    assert rep.status == "succeeded", rep.summary()
    tar_path = Path(rep.out_dir) / "model.tar"
    with tarfile.open(tar_path) as tar:
        objs = [m for m in tar.getmembers() if m.name.endswith(".o")]
        assert objs, tar.getnames()
        for m in objs:
            head = tar.extractfile(m).read(64)
            assert head[:4] == b"\x7fELF"
            assert int.from_bytes(head[18:20], "little") == 183, m.name  # EM_AARCH64
    assert set(file_machines(tar_path).values()) == {"aarch64"}
    assert rep.target_json == {"kind": "llvm", "mtriple": "aarch64-linux-gnu"}
    # parity ran through a host build of the same Relax module; say so
    assert rep.parity.status == "passed" and rep.parity.mode == "host-proxy"


def test_aarch64_shared_library_linked_with_cross_gcc(cnn_aarch64: CompileReport) -> None:
    if shutil.which("aarch64-linux-gnu-gcc") is None:
        pytest.skip("aarch64-linux-gnu-gcc not installed (Debian gcc-aarch64-linux-gnu; `make cross-toolchain`): "
                    "the .so link step cannot run here, the .tar of objects is tested above")
    so = Path(cnn_aarch64.out_dir) / "model.so"
    assert so.is_file()
    assert elf_machine(so.read_bytes()[:64]) == 183


def test_existing_output_needs_force(cnn_onnx: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("user data")
    with pytest.raises(InputError) as ei:
        compile_model(CompileOptions(model=cnn_onnx, target="llvm", out=out))
    assert "--force" in ei.value.hint
    assert (out / "keep.txt").read_text() == "user data"


def test_unknown_target_and_missing_codegen(cnn_onnx: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError) as ei:
        compile_model(CompileOptions(model=cnn_onnx, target="rk3599", out=tmp_path / "a"))
    assert ei.value.offending == "rk3599" and "rk3588" in ei.value.hint
    with pytest.raises(TargetError) as et:  # the PyPI wheel has no SPIR-V code generator
        compile_model(CompileOptions(model=cnn_onnx, target="vulkan", out=tmp_path / "b"))
    assert "vulkan" in et.value.message
    assert not (tmp_path / "b").exists()


def test_dynamic_dims_need_shapes(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    g = helper.make_graph([helper.make_node("Relu", ["ids"], ["y"], name="relu")], "g",
                          [helper.make_tensor_value_info("ids", TensorProto.FLOAT, ["batch", "sequence"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence"])])
    p = tmp_path / "dyn.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(p))
    with pytest.raises(InputError) as ei:
        compile_model(CompileOptions(model=p, target="llvm", out=tmp_path / "o"))
    assert "ids[1]" in ei.value.message and "--shape ids=" in ei.value.hint
    rep = compile_model(CompileOptions(model=p, target="llvm", out=tmp_path / "o", shapes={"ids": [2, 5]},
                                       latency_runs=0))
    assert rep.ok and rep.input_shapes == {"ids": [2, 5]}
    assert [d["dim"] for d in rep.dynamic_dims] == ["batch", "sequence"]

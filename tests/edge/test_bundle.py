"""Bundles: contents, offline verification, every tampering refused with the offending member named."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from studio.core.errors import BundleError, InputError, TargetError
from studio.edge.manifest import Manifest
from studio.edge.trust import load_trusted_keys
from studio.edge.verify import extract_verified, verify_bundle, verify_directory
from studio.package.boards import BOARD_IDS, board_accepts, list_boards, load_board
from studio.package.bundle import build_bundle, sign_directory
from studio.package.keys import KeyStore
from tests.edge.helpers import PASSPHRASE, make_einsum, make_mlp, read_members, reg, write_members

INSPECTOR_TARGETS = {"tensorrt", "openvino", "qnn-htp", "ascend-310p", "rk3588", "tvm-relax", "ort-cpu", "hailo-8",
                     "mlu370"}


def test_board_profiles() -> None:
    boards = {b.id: b for b in list_boards()}
    assert set(BOARD_IDS) <= set(boards)
    for b in boards.values():
        assert b.target in INSPECTOR_TARGETS and b.cpu_arch in ("aarch64", "x86_64") and b.memory_mb > 0
        assert b.execution_providers and b.power_sensor.get("source")
    assert load_board("jetson-orin-nano").target == "tensorrt"
    assert board_accepts("rk3588", "generic-aarch64") and not board_accepts("rk3588", "generic-x86_64")
    assert not board_accepts("rpi5", "rk3588")
    with pytest.raises(TargetError, match="unknown board"):
        load_board("nope")


def test_bundle_contents_and_verify(tmp_path: Path, signing_key, trust_file: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "export"
    make_mlp(src / "model.onnx")
    (src / "tokenizer.json").write_text('{"version": "1.0"}')
    (src / "preprocessor_config.json").write_text("{}")
    rep = build_bundle(src, "rpi5", signing_key, tmp_path / "out" / "b.tar", version="7")
    assert rep.name == "export" and rep.board == "rpi5" and rep.target == "ort-cpu" and rep.verdict == "pass"
    members = {m.name: data for m, data in read_members(Path(rep.bundle))}
    assert set(members) == {"runtime.json", "compat-report.json", "model/model.onnx", "model/tokenizer.json",
                            "model/preprocessor_config.json", "manifest.json", "manifest.sig"}
    m = Manifest.parse(members["manifest.json"])
    assert m.name == "export" and m.version == "7" and m.board == "rpi5" and m.schema_version == 1
    assert {f.path for f in m.files} == set(members) - {"manifest.json", "manifest.sig"}
    import hashlib

    for f in m.files:
        assert f.sha256 == hashlib.sha256(members[f.path]).hexdigest() and f.size == len(members[f.path])
    compat = json.loads(members["compat-report.json"])
    assert compat["target"] == "ort-cpu" and compat["models"]["model/model.onnx"]["verdict"] == "pass"
    runtime = json.loads(members["runtime.json"])
    assert runtime["models"][0]["name"] == "export" and runtime["execution_providers"] == ["CPUExecutionProvider"]
    v = verify_bundle(rep.bundle, load_trusted_keys(trust_file))
    assert v.ok and v.files == 5 and v.version == "7"
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "verify", rep.bundle, "--trust", str(trust_file)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("OK")
    assert not [p for p in (tmp_path / "out").iterdir() if p.name != "b.tar"]  # no temp leftovers


def test_refuses_failing_target_unless_forced(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    model = make_einsum(tmp_path / "ein.onnx")
    with pytest.raises(TargetError, match="fails the rk3588 target") as ei:
        build_bundle(model, "rk3588", signing_key, tmp_path / "x.tar")
    assert "--force" in (ei.value.hint or "")
    assert not (tmp_path / "x.tar").exists()
    rep = build_bundle(model, "rk3588", signing_key, tmp_path / "x.tar", force=True)
    assert rep.forced and rep.verdict == "fail"
    m = Manifest.parse({t.name: d for t, d in read_members(tmp_path / "x.tar")}["manifest.json"])
    assert m.forced  # recorded, under the signature
    rep = build_bundle(model, "generic-x86_64", signing_key, tmp_path / "y.tar")  # ort-cpu runs Einsum
    assert rep.verdict == "pass"


def _tampered(tmp_path: Path, good: Path, case: str, other_key=None) -> Path:  # type: ignore[no-untyped-def]
    members = read_members(good)
    out = tmp_path / f"bad-{case}.tar"
    if case == "flipped-byte":
        members = [(t, (d[:-5] + bytes([d[-5] ^ 1]) + d[-4:]) if t.name.endswith(".onnx") else d)
                   for t, d in members]
    elif case == "edited-manifest":
        def edit(d: bytes) -> bytes:
            doc = json.loads(d)
            doc["version"] = "999"
            return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
        members = [(t, edit(d) if t.name == "manifest.json" else d) for t, d in members]
    elif case == "missing-file":
        members = [(t, d) for t, d in members if not t.name.endswith(".onnx")]
    elif case == "extra-file":
        members.insert(0, reg("model/extra.bin", b"surprise"))
    elif case == "dotdot":
        members.insert(0, reg("../evil.txt", b"x"))
    elif case == "dotdot-inner":
        members.insert(0, reg("model/../../evil.txt", b"x"))
    elif case == "absolute":
        members.insert(0, reg("/tmp/evil.txt", b"x"))
    elif case in ("symlink", "hardlink", "device", "fifo"):
        ti = tarfile.TarInfo("model/link")
        ti.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE, "device": tarfile.CHRTYPE,
                   "fifo": tarfile.FIFOTYPE}[case]
        ti.linkname = "/etc/passwd"
        members.insert(0, (ti, None))
    elif case == "duplicate":
        members.append(next((t, b"evil" + d) for t, d in members if t.name.endswith(".onnx")))
    return write_members(out, members)


CASES = {"flipped-byte": "does not match", "edited-manifest": "signature does not verify",
         "missing-file": "missing", "extra-file": "not listed", "dotdot": "unsafe path",
         "dotdot-inner": "unsafe path", "absolute": "unsafe path", "symlink": "link entry",
         "hardlink": "link entry", "device": "device", "fifo": "device", "duplicate": "twice"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tampered_bundles_are_refused(case: str, tmp_path: Path, bundles, trust_file: Path) -> None:  # type: ignore[no-untyped-def]
    bad = _tampered(tmp_path, bundles["1"], case)
    trusted = load_trusted_keys(trust_file)
    with pytest.raises(BundleError, match=CASES[case]):
        verify_bundle(bad, trusted)
    dest = tmp_path / "extract"
    with pytest.raises(BundleError):
        extract_verified(bad, dest, trusted)
    assert not dest.exists() and not (tmp_path / "evil.txt").exists()
    proc = subprocess.run([sys.executable, "-m", "studio.cli.main", "verify", str(bad), "--trust", str(trust_file)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and "error:" in proc.stderr


def test_untrusted_signer(tmp_path: Path, bundles, keys: KeyStore) -> None:  # type: ignore[no-untyped-def]
    other = KeyStore(tmp_path / "other")
    other.generate("mallory", PASSPHRASE)
    with pytest.raises(BundleError, match="untrusted key"):
        verify_bundle(bundles["1"], load_trusted_keys(other.public_path("mallory")))
    # a bundle signed by mallory, verified by the studio's trust: refused too
    sk = other.load_signing_key("mallory", PASSPHRASE)
    rep = build_bundle(make_mlp(tmp_path / "m.onnx"), "generic-x86_64", sk, tmp_path / "m.tar")
    with pytest.raises(BundleError, match="untrusted key"):
        verify_bundle(rep.bundle, load_trusted_keys(keys.public_path("dev")))


def test_bad_inputs(tmp_path: Path, signing_key) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="does not exist"):
        build_bundle(tmp_path / "nope.onnx", "rpi5", signing_key, tmp_path / "a.tar")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no .onnx"):
        build_bundle(tmp_path / "empty", "rpi5", signing_key, tmp_path / "a.tar")
    with pytest.raises(InputError, match="invalid bundle version"):
        build_bundle(make_mlp(tmp_path / "m.onnx"), "rpi5", signing_key, tmp_path / "a.tar", version="../1")
    assert not (tmp_path / "a.tar").exists()


def test_external_data_is_bundled(tmp_path: Path, signing_key, trust_file: Path) -> None:  # type: ignore[no-untyped-def]
    import onnx

    m = onnx.load(str(make_mlp(tmp_path / "a" / "tmp.onnx", pad_bytes=8192)))
    (tmp_path / "b").mkdir()
    onnx.save(m, str(tmp_path / "b" / "big.onnx"), save_as_external_data=True, location="big.onnx.data",
              size_threshold=0)
    rep = build_bundle(tmp_path / "b" / "big.onnx", "generic-x86_64", signing_key, tmp_path / "big.tar")
    names = {t.name for t, _ in read_members(tmp_path / "big.tar")}
    assert {"model/big.onnx", "model/big.onnx.data"} <= names and rep.name == "big"
    dest = tmp_path / "x"
    extract_verified(rep.bundle, dest, load_trusted_keys(trust_file))
    import onnxruntime as ort

    ort.InferenceSession(str(dest / "model" / "big.onnx"))  # loads with its external data


def test_verify_directory_for_triton_and_compiled_paths(tmp_path: Path, signing_key, trust_file: Path) -> None:  # type: ignore[no-untyped-def]
    """The function a Triton Python-backend model.py and the compiled-artifact loader call before loading."""
    d = tmp_path / "repo" / "tiny" / "1"
    make_mlp(d / "model.onnx")
    (d / "lib.so").write_bytes(b"\x7fELF compiled")
    sign_directory(d, signing_key, name="tiny", version="1", exclude=("model.py", "__pycache__/*"))
    (d / "model.py").write_text("# triton python backend\n")
    (d / "__pycache__").mkdir()
    (d / "__pycache__" / "model.cpython-311.pyc").write_bytes(b"x")
    trusted = load_trusted_keys(trust_file)
    m = verify_directory(d, trusted, allow_extra=["model.py", "__pycache__/*"])
    assert {f.path for f in m.files} == {"model.onnx", "lib.so"}
    with pytest.raises(BundleError, match="not listed"):
        verify_directory(d, trusted)  # model.py is not allowed unless the loader says so
    (d / "lib.so").write_bytes(b"\x7fELF compileD")
    with pytest.raises(BundleError, match="lib.so"):
        verify_directory(d, trusted, allow_extra=["model.py", "__pycache__/*"])
    (d / "lib.so").write_bytes(b"\x7fELF compiled")
    (d / "model.onnx").rename(d / "real.onnx")
    (d / "model.onnx").symlink_to(d / "real.onnx")
    with pytest.raises(BundleError, match="link"):
        verify_directory(d, trusted, allow_extra=["model.py", "__pycache__/*", "real.onnx"])
    shutil.rmtree(d)

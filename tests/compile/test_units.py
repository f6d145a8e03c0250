"""Fast checks without TVM builds: targets, ELF reading, mlc_llm planning (shape specs: tests/core/test_shapes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from studio.compile.mlc import mlc_status, plan_llm
from studio.compile.targets import resolve_target, target_ids
from studio.core.errors import InputError
from studio.edge.elf import elf_machine


def test_targets_are_json_dicts_and_boards_resolve() -> None:
    ids = target_ids()
    for tid in ["llvm", "aarch64", "aarch64-neon", "opencl", "vulkan", "rk3588", "jetson-orin-nano", "rpi5",
                "atlas-310p", "generic-x86_64", "generic-aarch64"]:
        assert tid in ids
        t = resolve_target(tid)
        json.dumps(t.tvm)  # plain JSON, never the removed string form
    assert resolve_target("aarch64-neon").tvm["mattr"] == ["+neon"]
    rk = resolve_target("rk3588")
    assert rk.board == "rk3588" and rk.tvm["mtriple"] == "aarch64-linux-gnu" and rk.tvm["mcpu"] == "cortex-a76"
    assert resolve_target("opencl").tvm["host"]["mtriple"] == "aarch64-linux-gnu"
    assert resolve_target("llvm").is_host and not resolve_target("aarch64").is_host
    assert resolve_target("aarch64").cross_cc == "aarch64-linux-gnu-gcc"


def test_elf_machine() -> None:
    hdr = bytearray(64)
    hdr[:6] = b"\x7fELF\x02\x01"
    hdr[18:20] = (183).to_bytes(2, "little")
    assert elf_machine(bytes(hdr)) == 183
    assert elf_machine(b"not an elf file at all") is None


def test_mlc_plan_and_status(tmp_path: Path) -> None:
    hf = tmp_path / "vlm"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({"model_type": "qwen2_vl", "text_config": {"model_type": "qwen2"}}))
    plan = plan_llm(hf, tmp_path / "out", target_kind="opencl")
    steps = [c[3] for c in plan.commands]
    assert steps == ["convert_weight", "gen_config", "compile"]
    assert plan.commands[2][-3:] == ["opencl", "-o", str(tmp_path / "out" / "mlc-lib-opencl.so")]
    st = mlc_status()
    if not st.available:  # the case on this project's machines: MLC ships wheels only on its own index
        assert "pip install" in st.message and "mlc" in st.message
    with pytest.raises(InputError):
        plan_llm(tmp_path, tmp_path / "o")  # not an HF folder

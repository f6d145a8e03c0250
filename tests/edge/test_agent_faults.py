"""Faults under load on a real agent process: 64 client threads keep inferring while v2 is deployed, v1 is
rolled back to, a bundle whose model cannot answer is deployed, and the agent is killed with SIGKILL and
restarted. Every answer is v1's or v2's exact output (nothing corrupted), the only errors are refused
connections while the process is down, no version is lost, and the active version keeps serving throughout."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from studio.core.errors import StudioError
from studio.package.bundle import build_bundle
from studio.package.client import AgentClient, deploy_bundle
from tests.edge.helpers import AgentProcess
from tests.edge.infer_load import CLIENTS, Load, wait_more

pytestmark = pytest.mark.timeout(300)


def _broken_model(path: Path) -> Path:
    """Loads in ONNX Runtime, cannot answer: its Reshape asks 16 values for a 3x7 shape (warm-up fails)."""
    import onnx
    from onnx import numpy_helper

    shape = numpy_helper.from_array(np.array([3, 7], np.int64), "shape")
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["out"])], "broken",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3, 7])], [shape])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(m, path)
    return path


def test_deploy_rollback_failing_bundle_and_kill9_under_64_clients(agent: AgentProcess, bundles, signing_key,  # type: ignore[no-untyped-def]
                                                                   token_file: Path, tmp_path: Path) -> None:
    token = token_file.read_text().strip()
    deploy_bundle(bundles["1"], agent.url, token)
    broken = build_bundle(_broken_model(tmp_path / "broken" / "tiny.onnx"), "generic-x86_64", signing_key,
                          tmp_path / "tiny-3.tar", version="3").bundle
    with Load(agent.url) as load:
        wait_more(load, "1")
        assert deploy_bundle(bundles["2"], agent.url, token).version == "2"  # deploy under load
        wait_more(load, "2")
        AgentClient(agent.url, token).rollback("tiny", "1")  # rollback under load
        wait_more(load, "1")
        with pytest.raises(StudioError, match="warm-up"):  # a bundle that cannot answer: refused, v1 serves
            deploy_bundle(Path(broken), agent.url, token)
        wait_more(load, "1")
        before_kill = load.snapshot()
        assert before_kill[2] == 0, "connections refused while the agent was up"
        agent.kill9()  # the process dies mid-traffic, then comes back on the same port and data folder
        time.sleep(0.5)
        agent.start()
        wait_more(load, "1")
    assert load.bad == [], load.bad[:5]
    assert load.ok["1"] > 200 and load.ok["2"] > 0 and load.refused > 0
    st = AgentClient(agent.url, token).status()["models"]["tiny"]
    assert st["active"] == "1" and [v["version"] for v in st["versions"]] == ["1", "2"]  # 3 never installed
    print(f"\nfaults under {CLIENTS} clients: v1 answers {load.ok['1']}, v2 {load.ok['2']}, refused while down "
          f"{load.refused}, other errors {len(load.bad)}")

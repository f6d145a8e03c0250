"""Eight real studio-agent processes on loopback (started once for the session, in parallel), one signing key they
trust, a workspace and the fleet file `lab` that lists them, added through `studio fleet add`."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from studio.cli.main import main
from studio.core.workspace import Workspace
from tests.edge.helpers import AgentProcess, DevKeys, dev_keys, make_mlp

N_AGENTS = 8


@dataclass
class Lab:
    root: Path
    ws: Workspace
    dev: DevKeys
    agents: list[AgentProcess]
    signing_key: Any
    built: dict[tuple[str, str], Path] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [f"a{i}" for i in range(len(self.agents))]

    def bundle(self, name: str, version: str, model: Path | None = None) -> Path:
        """Bundle ``name`` ``version`` (make_mlp unless ``model``), signed with the key the agents trust."""
        from studio.package.bundle import build_bundle

        key = (name, version)
        if key not in self.built:
            src = model or make_mlp(self.root / "src" / f"{name}-{version}" / f"{name}.onnx", scale=float(version))
            self.built[key] = Path(build_bundle(src, "generic-x86_64", self.signing_key,
                                                self.root / "bundles" / f"{name}-{version}.tar", name=name,
                                                version=version).bundle)
        return self.built[key]

    def deploy_all(self, name: str, version: str) -> None:
        """``name`` ``version`` active on every agent (the baseline a rollout starts from)."""
        from studio.package.client import deploy_bundle

        bundle, token = self.bundle(name, version), self.dev.token.read_text().strip()
        with ThreadPoolExecutor(max_workers=N_AGENTS) as pool:
            list(pool.map(lambda a: deploy_bundle(bundle, a.url, token), self.agents))

    def active(self, name: str) -> list[str | None]:
        from studio.package.client import AgentClient

        token = self.dev.token.read_text().strip()
        return [(AgentClient(a.url, token).status()["models"].get(name) or {}).get("active") for a in self.agents]

    def cli(self, *argv: str) -> int:
        return main(["fleet", *argv, "--workspace", str(self.ws.root)])


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("fleet")
    dev = dev_keys(root)
    agents = [AgentProcess(root / f"agent-{i}", dev.trust, dev.token) for i in range(N_AGENTS)]
    try:
        with ThreadPoolExecutor(max_workers=N_AGENTS) as pool:
            list(pool.map(lambda a: a.start(timeout=120), agents))
        ws = Workspace.create(root / "ws")
        lab = Lab(root, ws, dev, agents, dev.signing_key)
        assert lab.cli("init", "lab", "--token-file", str(dev.token)) == 0
        for i, a in enumerate(agents):
            ring = "canary" if i == 0 else ("early" if i < 3 else "main")
            assert lab.cli("add", a.url, "--fleet", "lab", "--name", f"a{i}", "--label", f"ring={ring}",
                           "--label", "site=loopback", "--label", "board=generic-x86_64") == 0
        lab.ws = Workspace.open(ws.root)
        yield lab
    finally:
        for a in agents:
            a.stop()


@pytest.fixture()
def alive(lab: Lab) -> Any:
    """Every agent is up again after the test (a test that kills one restarts it here)."""
    yield lab
    for a in lab.agents:
        if a.proc is None or a.proc.poll() is not None:
            a.start(timeout=120)

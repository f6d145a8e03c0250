"""Edge pieces driven through an installed wheel's own commands: keys, a signed bundle, its agent process."""

from __future__ import annotations

import secrets
from pathlib import Path

from tests.edge.helpers import PASSPHRASE, AgentProcess, make_mlp
from tests.install.venvs import WheelVenv, clean_env

KEY_ENV = {"STUDIO_KEY_PASSPHRASE": PASSPHRASE}


def signed_bundle(venv: WheelVenv, folder: Path, name: str = "tiny") -> tuple[Path, Path]:
    """``studio keys generate`` + ``export-public`` + ``package`` + ``verify`` from ``venv``: (bundle, trust)."""
    venv.run("studio", "keys", "generate", "release", cwd=folder, env=KEY_ENV)
    trust = folder / "release.pub"
    venv.run("studio", "keys", "export-public", "release", "--out", trust, cwd=folder)
    model = make_mlp(folder / "src" / f"{name}.onnx")
    bundle = folder / f"{name}.tar"
    venv.run("studio", "package", model, "--board", "generic-x86_64", "--key", "release", "--out", bundle,
             "--version", "1", cwd=folder, env=KEY_ENV)
    out = venv.run("studio", "verify", bundle, "--trust", trust, cwd=folder)
    assert "Traceback" not in out.stderr
    return bundle, trust


def wheel_agent(venv: WheelVenv, folder: Path, trust: Path) -> AgentProcess:
    """``studio-agent`` of ``venv`` on a free loopback port (not started); its token is ``folder/agent.token``."""
    token = folder / "agent.token"
    token.write_text(secrets.token_urlsafe(32) + "\n")
    return AgentProcess(folder / "agent-data", trust, token, command=[str(venv.bin / "studio-agent")],
                        env=clean_env(venv.path), cwd=folder, log=folder / "agent.log")


def infer_body(x) -> dict:  # type: ignore[no-untyped-def]
    return {"inputs": [{"name": "x", "shape": list(x.shape), "datatype": "FP32", "data": x.ravel().tolist()}]}

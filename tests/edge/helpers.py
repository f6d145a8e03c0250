"""Real pieces for the edge tests: tiny ONNX models, key stores, bundles, and a real studio-agent process."""

from __future__ import annotations

import io
import os
import secrets
import signal
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PASSPHRASE = "correct horse battery staple"


_GIVEN: set[int] = set()  # ports handed out in this process: never handed out twice


def free_port() -> int:
    """A loopback port nobody listens on now and that this process has not handed out before: the kernel may
    give the same ephemeral port to two binds in a row once the first is closed (two of a fleet's eight agents
    were given 49935 on a loaded machine, and the fleet file refused the second)."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _GIVEN:
            _GIVEN.add(port)
            return port
    raise RuntimeError("no fresh loopback port after 100 tries")


def free_port_with(digits: str) -> int:
    """A free loopback port whose number holds ``digits`` ("401": the port that once read as a rejected token)."""
    for scale in (10, 100, 1000):
        for p in range(int(digits) * scale, (int(digits) + 1) * scale):
            if p > 65535:
                break
            if p in _GIVEN:
                continue
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    continue
            _GIVEN.add(p)
            return p
    raise RuntimeError(f"no free loopback port holding {digits}")


def _save(graph: Any, path: Path, external_data: bool = False) -> Path:
    """``graph`` as an opset-17, IR-9 model file at ``path`` (folders made); ``external_data``: its weights in
    ``<name>.data`` beside it, the layout of models past 2 GB (studio.core.external_data)."""
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 9
    path.parent.mkdir(parents=True, exist_ok=True)
    if external_data:
        onnx.save_model(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=f"{path.name}.data", size_threshold=0)
    else:
        onnx.save(m, str(path))
    return path


def write_token(path: Path) -> Path:
    """A fresh agent token in ``path`` (the file ``--token-file`` reads)."""
    path.write_text(secrets.token_urlsafe(32) + "\n")
    return path


@dataclass
class DevKeys:
    """Key "dev" (passphrase PASSPHRASE) in ``ROOT/keys``, its public key in ``ROOT/trusted.pub`` and an agent token:
    what a test needs to sign bundles and start an agent that trusts them."""

    keys: Any  # studio.package.keys.KeyStore
    trust: Path
    token: Path

    @property
    def signing_key(self) -> Any:
        return self.keys.load_signing_key("dev", PASSPHRASE)


def trust_key(store: Any, key_id: str, passphrase: str, path: Path) -> Path:
    """Key ``key_id`` made in ``store`` (a KeyStore) and its public key written to ``path``: the trust file an
    agent is started with."""
    store.generate(key_id, passphrase)
    path.write_text(store.export_public(key_id) + "\n")
    return path


def dev_keys(root: Path, token_name: str = "agent.token") -> DevKeys:
    from studio.package.keys import KeyStore

    keys = KeyStore(root / "keys")
    trust = trust_key(keys, "dev", PASSPHRASE, root / "trusted.pub")
    return DevKeys(keys, trust, write_token(root / token_name))


def deploy_tiny(agent: AgentProcess, dev: DevKeys, root: Path) -> None:
    """Model "tiny" (make_mlp) signed with ``dev``'s key as version 1 and deployed to ``agent``."""
    from studio.package.bundle import build_bundle
    from studio.package.client import deploy_bundle

    bundle = build_bundle(make_mlp(root / "src" / "tiny.onnx"), "generic-x86_64", dev.signing_key,
                          root / "tiny.tar", version="1").bundle
    deploy_bundle(Path(bundle), agent.url, dev.token.read_text().strip())


def self_signed_cert(folder: Path) -> tuple[Path, Path]:
    """(cert.pem, key.pem) for 127.0.0.1 made with the openssl CLI; the test skips without it."""
    import shutil

    import pytest

    if not shutil.which("openssl"):
        pytest.skip("openssl CLI not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def export_sample(root: Path, name: str, with_past: bool | None = None) -> tuple[Path, Path]:
    """The built-in sample ``name`` written to ROOT/NAME and exported to ROOT/NAME-onnx/model.onnx:
    (the sample's folder, the export folder). ``with_past=False``: the single-pass graph (--no-with-past)."""
    from studio.export.api import ExportOptions, export_model, write_sample

    sample = write_sample(name, root / name)
    rep = export_model(ExportOptions(model_dir=sample, output=root / f"{name}-onnx" / "model.onnx",
                                     with_past=with_past))
    assert rep.status == "succeeded", rep.diagnosis
    return sample, root / f"{name}-onnx"


def make_mlp(path: Path, scale: float = 1.0, pad_bytes: int = 0, zero_pad: bool = False,
             external_data: bool = False) -> Path:
    """x[batch,16] -> relu(x @ W) [batch,8]; ``pad_bytes`` adds an unused initializer to make the file bigger
    (random, or zeros with ``zero_pad``: a bundle that compresses to almost nothing); ``external_data``: W in
    ``<name>.data`` beside the graph."""
    w = numpy_helper.from_array((np.arange(16 * 8, dtype=np.float32).reshape(16, 8) / 100.0) * scale, "W")
    inits = [w]
    if pad_bytes:
        pad = np.zeros(pad_bytes // 4, np.float32) if zero_pad else \
            np.random.default_rng(0).random(pad_bytes // 4, dtype=np.float32)
        inits.append(numpy_helper.from_array(pad, "pad"))
    g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["y"]), helper.make_node("Relu", ["y"], ["out"])],
                          "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 8])], inits)
    return _save(g, path, external_data)


def make_warmup_failing(path: Path) -> Path:
    """Loads fine, but a request of zeros with batch 1 cannot be reshaped to [2, 3]: warm-up fails."""
    shape = numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "shape")
    g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["out"])], "bad",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
                          [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])], [shape])
    return _save(g, path)


def make_einsum(path: Path) -> Path:
    """Einsum is not supported by the RK3588 NPU profile: the inspector says 'fail'."""
    g = helper.make_graph([helper.make_node("Einsum", ["x", "x"], ["y"], equation="ij,ij->i")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    return _save(g, path)


def mlp_ref(x: np.ndarray, scale: float = 1.0) -> np.ndarray:
    w = (np.arange(16 * 8, dtype=np.float32).reshape(16, 8) / 100.0) * scale
    return np.maximum(x @ w, 0)


def read_members(bundle: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    out = []
    with tarfile.open(bundle) as tf:
        for m in tf.getmembers():
            f = tf.extractfile(m) if m.isreg() else None
            out.append((m, f.read() if f else None))
    return out


def write_members(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        for ti, data in members:
            if data is not None:
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
            else:
                tf.addfile(ti)
    return path


def reg(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    return ti, data


def tree_snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root`` with size and mtime: 'nothing new on disk' compares two of these."""
    snap = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        is_dir = p.is_dir() and not p.is_symlink()  # a folder's mtime moves when scratch files come and go
        snap[p.relative_to(root).as_posix()] = (0, 0) if is_dir else (st.st_size, st.st_mtime_ns)
    return snap


class AgentProcess:
    """A real ``studio-agent`` on a free loopback port."""

    def __init__(self, data: Path, trust: Path, token_file: Path, *, max_upload_mb: float | None = None,
                 mdns: bool = False, extra: list[str] | None = None, log: Path | None = None,
                 command: list[str] | None = None, env: dict[str, str] | None = None,
                 cwd: Path | None = None, preexec: Callable[[], None] | None = None) -> None:
        """``command`` replaces ``python -m studio.agent.cli`` (e.g. an installed venv's ``studio-agent``),
        ``env`` the inherited environment, ``cwd`` the working folder, ``preexec`` runs in the child before
        the agent starts (e.g. to set a resource limit)."""
        self.data, self.trust, self.token_file = data, trust, token_file
        self.command = command or [sys.executable, "-m", "studio.agent.cli"]
        self.env, self.cwd, self.preexec = env, cwd, preexec
        self.port = free_port()
        self.max_upload_mb, self.mdns, self.extra = max_upload_mb, mdns, extra or []
        self.log = log or data.parent / f"agent-{self.port}.log"
        self.proc: subprocess.Popen | None = None
        self.scheme = "http"
        self.verify: Any = False  # the readiness probe's TLS: an ssl.SSLContext with a client cert for mTLS

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> AgentProcess:
        cmd = [*self.command, "--port", str(self.port), "--data", str(self.data),
               "--trust", str(self.trust), "--token-file", str(self.token_file), "--log-level", "info"]
        if self.max_upload_mb is not None:
            cmd += ["--max-upload-mb", str(self.max_upload_mb)]
        if not self.mdns:
            cmd.append("--no-mdns")
        cmd += self.extra
        env = {**(os.environ if self.env is None else self.env), "PYTHONUNBUFFERED": "1"}
        self._logf = open(self.log, "ab")
        self.proc = subprocess.Popen(cmd, stdout=self._logf, stderr=subprocess.STDOUT, env=env, cwd=self.cwd,
                                     preexec_fn=self.preexec)
        import httpx

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"agent exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/v2/health/ready", timeout=1.0, verify=self.verify).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"agent did not become ready:\n{self.log.read_text()[-3000:]}")

    def kill9(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()
        if getattr(self, "_logf", None):
            self._logf.close()

"""The agent's ``rknn`` runtime: serve a bundle's ``.rknn`` on a Rockchip NPU, or in the toolkit's simulator.

``load_rknn_model`` is the ``runtimes`` contribution ``studio.agent.runtime.load_deployment`` calls after the
version folder verified. It refuses a ``.rknn`` built for another NPU than this agent's, reading the platform
from the ``.rknn`` file itself (the toolkit writes ``"target_platform": [...]`` into it), checked on the very
bytes it loads (copied while hashed against the signed manifest). Then:

- on a board with rknn-toolkit-lite2 (``rknnlite``): ``RKNNLite.load_rknn`` + ``init_runtime`` in this process;
- elsewhere (x86, tests): rknn-toolkit2's simulator in the plugin's environment, one long-lived worker
  (``worker.py --serve``) that rebuilds the bundle's signed source ONNX with the same settings (the simulator
  cannot run a ``.rknn``), then answers one inference per request.

Both sit behind the ServedModel interface (KServe v2 metadata and infer, metrics, warm-up).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.agent.runtime import RuntimeMissing, ServedModel, TensorSpec
from studio.agent.verified_files import copy_verified, read_compiled_meta
from studio.core.errors import BundleError, ModelError
from studio.edge.manifest import Manifest
from studio.edge.tensors import dtype_to_kserve
from studio_rknn import env as envmod
from studio_rknn.manifest import PLATFORMS

PLATFORM = "rknn"
_TARGET_RE = re.compile(rb'"target_platform"\s*:\s*\[([^\]]*)\]')
_VERSION_RE = re.compile(rb'"version"\s*:\s*"([^"]+)"\s*,\s*"virtual_tensor"')


def rknn_file_info(data: bytes) -> dict[str, Any]:
    """What a ``.rknn`` says about itself: the platforms it was built for and the toolkit version."""
    if not data.startswith(b"RKNN"):
        raise BundleError("not an .rknn file (no RKNN header)", offending="model.rknn",
                          hint="rebuild it with `studio compile --backend rknn`")
    m = _TARGET_RE.search(data)
    platforms = [p.strip().strip('"').lower() for p in m.group(1).decode("ascii", "replace").split(",")] if m else []
    v = _VERSION_RE.search(data)
    return {"platforms": [p for p in platforms if p], "toolkit_version": v.group(1).decode() if v else ""}


def agent_platform(board: str) -> str:
    """This agent's NPU: its board's (``--board rk3588``), else the device tree's, else "" (unknown)."""
    if board in PLATFORMS:
        return board
    try:
        from studio.package.boards import load_board

        target = load_board(board).target
        if target in PLATFORMS:
            return target
    except Exception:  # "any", "auto" or a board without a profile
        pass
    try:
        compatible = Path("/proc/device-tree/compatible").read_bytes().decode("ascii", "replace").lower()
    except OSError:
        return ""
    return next((p for p in PLATFORMS if f"rockchip,{p}" in compatible), "")


@dataclass
class RknnServedModel(ServedModel):
    """A ``.rknn`` served like an ORT session; metadata names the platform and how it runs."""

    rknn_platform: str = ""
    mode: str = ""  # "npu" (rknn-toolkit-lite2) | "simulator"

    def metadata(self) -> dict[str, Any]:
        data = super().metadata()
        data["platform"] = PLATFORM
        return data


class LiteSession:
    """rknn-toolkit-lite2 on the board: the NPU runs the .rknn itself."""

    def __init__(self, rknn_path: Path, output_names: list[str]) -> None:
        from rknnlite.api import RKNNLite

        self._r = RKNNLite()
        self._outputs = output_names
        self._lock = threading.Lock()
        if self._r.load_rknn(str(rknn_path)) != 0 or self._r.init_runtime() != 0:
            raise ModelError(f"rknn-toolkit-lite2 cannot load {rknn_path.name} on this NPU", offending=rknn_path.name,
                             hint="check the NPU driver (dmesg | grep -i rknpu) and librknnrt.so's version")

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        with self._lock:
            outs = self._r.inference(inputs=list(feed.values()), data_format="nchw")
        values = dict(zip(self._outputs, outs, strict=False))
        return [values[n] for n in (names or self._outputs)]

    def close(self) -> None:
        self._r.release()


class SimulatorSession:
    """rknn-toolkit2's x86 simulator in a worker process of the plugin's environment (one request at a time)."""

    def __init__(self, source: Path, inputs: list[dict[str, Any]], platform: str, crop: bool,
                 output_names: list[str], env: Path | None = None, timeout: float = 600) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="studio-rknn-serve-"))
        self._inputs, self._outputs = inputs, output_names
        self._lock = threading.Lock()
        self._proc = subprocess.Popen([str(envmod.env_python(env)), "-I", str(envmod.worker_path()), "--serve"],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, env=envmod.clean_env(), cwd=self._dir)
        req = {"model": str(source), "inputs": inputs, "platform": platform, "crop": crop,
               "log": str(self._dir / "serve.log")}
        ready = self._ask(req, timeout)
        if not ready.get("ok"):
            self.close()
            raise ModelError(f"the rknn simulator cannot build {source.name} for {platform}: "
                             f"{ready.get('failed_stage', '')}: {ready.get('error', '')}", offending=source.name,
                             hint="check the model with `studio inspect --verify --target " + platform + "`")

    def _ask(self, obj: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(json.dumps(obj) + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise ModelError(f"the rknn simulator process has stopped ({exc})", offending="rknn simulator",
                             hint="redeploy the version; the agent's log has the worker's end") from exc
        while True:
            line = self._proc.stdout.readline()
            if not line:
                raise ModelError(f"the rknn simulator process ended (exit {self._proc.poll()})",
                                 offending="rknn simulator", hint="see " + str(self._dir / "serve.log"))
            if line.startswith("{"):
                return json.loads(line)

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        with self._lock:
            out_dir = Path(tempfile.mkdtemp(dir=self._dir))
            try:
                arrays = []
                for k, spec in enumerate(self._inputs):
                    p = out_dir / f"in_{k}.npy"
                    np.save(p, np.ascontiguousarray(feed[spec["name"]]))
                    arrays.append(str(p))
                res = self._ask({"arrays": arrays, "out_dir": str(out_dir)})
                if not res.get("ok"):
                    raise RuntimeError(res.get("error") or "simulator inference failed")
                outs = [np.load(p) for p in res["outputs"]]
            finally:
                shutil.rmtree(out_dir, ignore_errors=True)
        values = dict(zip(self._outputs, outs, strict=False))
        return [values[n] for n in (names or self._outputs)]

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()  # type: ignore[union-attr]
                self._proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
        shutil.rmtree(self._dir, ignore_errors=True)


def _lite_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("rknnlite") is not None


def load_rknn_model(directory: Path, spec: dict[str, Any], manifest: Manifest, runtime: dict[str, Any], *,
                    board: str = "any") -> ServedModel:
    """Load ``spec`` (a runtime.json model with runtime "rknn") from the verified version folder."""
    cfg = dict(runtime.get("rknn") or {})
    folder, meta = read_compiled_meta(directory, manifest, spec,
                                      "rebuild the bundle from the `studio compile --backend rknn` folder")
    rknn_rel = f"{folder}/{(meta.get('libraries') or ['model.rknn'])[0]}"
    mine = agent_platform(board)
    private = Path(tempfile.mkdtemp(prefix="studio-rknn-"))
    keep = False
    try:
        rknn_path = copy_verified(directory, manifest, rknn_rel, private)
        info = rknn_file_info(rknn_path.read_bytes())
        built_for = info["platforms"] or [str(meta.get("platform") or "")]
        if not mine:
            raise ModelError(f"this agent does not know its NPU, so it cannot check that {rknn_rel} (built for "
                             f"{', '.join(built_for)}) runs here", offending=f"board {board}",
                             hint="start studio-agent with --board rk3588 (or the board's id)")
        if mine not in built_for:
            raise ModelError(f"{rknn_rel} is built for {', '.join(built_for)} (rknn-toolkit2 "
                             f"{info['toolkit_version'] or meta.get('toolkit_version', '?')}), but this agent's NPU "
                             f"is {mine}: refused", offending=rknn_rel,
                             hint=f"compile for this board: `studio compile MODEL.onnx --target {mine} --backend "
                                  "rknn`, package that folder and deploy it again")
        inputs = [dict(i) for i in meta.get("inputs", [])]
        out_names = [str(n) for n in meta.get("outputs", [])]
        if _lite_available():
            session: Any = LiteSession(rknn_path, out_names)
            mode, keep = "npu", True  # the runtime maps the file: it stays until the agent stops
        else:
            status = envmod.check_env()
            if not status.ok:
                raise RuntimeMissing(
                    f"bundle {manifest.name} {manifest.version} needs the rknn runtime: no rknn-toolkit-lite2 on "
                    f"this machine and no rknn-toolkit2 simulator ({status.reason})", offending="runtime: rknn",
                    hint="on the board: python3 -m pip install rknn-toolkit-lite2 (then restart studio-agent); "
                         "on x86 for tests: studio-rknn-env create")
            src_rel = f"{folder}/{meta.get('source_onnx') or 'model.onnx'}"
            source = copy_verified(directory, manifest, src_rel, private)
            session = SimulatorSession(source, inputs, mine, bool(meta.get("crop")), out_names)
            mode = "simulator"
    finally:
        if not keep:
            shutil.rmtree(private, ignore_errors=True)  # the simulator has built from its copy by now
    specs = {o.get("name"): o for o in meta.get("output_specs") or []}
    tensors_in = [TensorSpec(i["name"], dtype_to_kserve(i.get("dtype", "float32")), [int(d) for d in i["shape"]])
                  for i in inputs]
    tensors_out = [TensorSpec(n, dtype_to_kserve(str((specs.get(n) or {}).get("dtype") or "float32")),
                              [int(d) for d in (specs.get(n) or {}).get("shape") or []]) for n in out_names]
    return RknnServedModel(name=spec["name"], version=manifest.version, path=directory / folder, session=session,
                           inputs=tensors_in, outputs=tensors_out,
                           providers=[f"RKNN({mine}, {mode}, toolkit {cfg.get('toolkit_version') or '?'})"],
                           output_names=out_names, rknn_platform=mine, mode=mode)

"""The agent's TVM link of "verification at load": serve a bundle's compiled (TVM Relax) module.

A bundle built from a `studio compile` folder names runtime "tvm" in ``runtime.json`` and holds the module under
``compiled/`` (library, ``params.bin``, ``compiled.json``). :func:`load_tvm_model` is called by
``studio.agent.runtime.load_deployment`` after ``verify_directory`` checked the whole folder, and checks again,
on the very bytes it loads, that each file it uses is listed in the verified manifest with that SHA-256: the
library is copied into a private folder while it is hashed and loaded from that copy, so a file swapped on disk
between the check and the load is never executed. The module then runs on a Relax VirtualMachine behind the
same ServedModel interface as an ONNX Runtime session (KServe v2 metadata and infer, metrics, warm-up).

apache-tvm is optional on a board: without it the bundle is refused before activation (RuntimeMissing), with
the version to install, and the active version keeps serving.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from studio.agent.runtime import RuntimeMissing, ServedModel, TensorSpec
from studio.agent.verified_files import copy_verified as _copy_verified
from studio.agent.verified_files import read_compiled_meta
from studio.agent.verified_files import read_verified as _read_verified
from studio.compile.runner import flatten_vm_output
from studio.core.errors import ModelError
from studio.edge.manifest import Manifest
from studio.edge.tensors import dtype_to_kserve

RUNTIME = "tvm"
PLATFORM = "tvm_relax"




def tvm_available() -> tuple[bool, str]:
    """(importable, version or reason) without importing TVM."""
    try:
        if importlib.util.find_spec("tvm") is None:
            return False, "not installed"
    except (ImportError, ValueError) as exc:
        return False, f"cannot be imported ({exc})"
    try:
        from importlib.metadata import version

        return True, version("apache-tvm")
    except Exception:
        return True, "unknown version"


def require_runtime(name: str, version: str, tvm_cfg: dict[str, Any]) -> Any:
    """Import TVM or raise RuntimeMissing naming the runtime and how to install it on the board."""
    want = str(tvm_cfg.get("version") or "")
    install = str(tvm_cfg.get("install") or "python3 -m pip install apache-tvm")
    pip = f"{Path(sys.executable).parent / 'pip'} install 'apache-tvm=={want}'" if want[:1].isdigit() else install
    try:
        import tvm
        from tvm import relax  # noqa: F401  (the VM lives here; a runtime-only build without it cannot serve)
    except ImportError as exc:
        raise RuntimeMissing(
            f"bundle {name} {version} needs the TVM runtime (apache-tvm {want or 'any version'}), which is not "
            f"installed on this agent ({exc})", offending="runtime: tvm",
            hint=f"install it into the agent's environment on the board: {pip} (then restart studio-agent); "
                 "or deploy an ONNX Runtime bundle of the model") from exc
    return tvm


@dataclass
class TVMServedModel(ServedModel):
    """A compiled module served like an ORT session; metadata names the TVM platform."""

    tvm_version: str = ""
    target: str = ""
    library: str = ""

    def metadata(self) -> dict[str, Any]:
        data = super().metadata()
        data["platform"] = PLATFORM
        return data


class TVMSession:
    """The slice of ``ort.InferenceSession`` that ServedModel uses (``run``), over a Relax VirtualMachine."""

    def __init__(self, tvm: Any, vm: Any, dev: Any, entry: str, params: list[Any], input_names: list[str],
                 output_names: list[str]) -> None:
        self._tvm, self._vm, self._dev, self._entry = tvm, vm, dev, entry
        self._params, self._inputs, self._outputs = params, input_names, output_names
        self._lock = threading.Lock()  # one VM, its register file is not shared between threads

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        tensor = self._tvm.runtime.tensor
        with self._lock:
            args = [tensor(np.ascontiguousarray(feed[n]), self._dev) for n in self._inputs]
            out = self._vm[self._entry](*args, *self._params)
            values = dict(zip(self._outputs, flatten_vm_output(out), strict=False))
        return [values[n] for n in (names or self._outputs)]


def load_tvm_model(directory: Path, spec: dict[str, Any], manifest: Manifest, runtime: dict[str, Any],
                   **_host: Any) -> ServedModel:
    """Load ``spec`` (a runtime.json model entry with runtime "tvm") from the verified version folder."""
    tvm_cfg = dict(runtime.get("tvm") or {})
    tvm = require_runtime(manifest.name, manifest.version, tvm_cfg)
    from tvm import relax

    folder, meta = read_compiled_meta(directory, manifest, spec, "rebuild the bundle from the `studio compile` folder")
    lib_rel = str(tvm_cfg.get("library") or "")
    if not lib_rel.startswith(folder + "/"):
        libs = [f"{folder}/{n}" for n in meta.get("libraries", [])]
        lib_rel = next((n for n in libs if n in manifest.file_map() and n.endswith(".so")), None) or next(
            (n for n in libs if n in manifest.file_map()), "")
    params_rel = f"{folder}/{meta.get('params') or 'params.bin'}"
    params_raw = _read_verified(directory, manifest, params_rel)
    device = str(meta.get("device") or "cpu")
    private = Path(tempfile.mkdtemp(prefix="studio-tvm-"))
    try:
        lib_path = _copy_verified(directory, manifest, lib_rel, private)
        try:
            lib = tvm.runtime.load_module(str(lib_path))
        except Exception as exc:
            hint = ("a library built for another CPU cannot load here; package the compile for this board"
                    if lib_path.suffix == ".so" else
                    "model.tar is linked on the board with its C compiler: install gcc (build-essential)")
            raise ModelError(f"TVM cannot load {lib_rel}: {exc}", offending=lib_rel, hint=hint) from exc
    finally:
        shutil.rmtree(private, ignore_errors=True)  # the library stays mapped once loaded
    try:
        pdict = tvm.runtime.load_param_dict(bytearray(params_raw))
        dev = tvm.device(device, 0)
        params = [pdict[n] for n in meta.get("param_names", [])]
        if device != "cpu":
            params = [tvm.runtime.tensor(p.numpy(), dev) for p in params]
        vm = relax.VirtualMachine(lib, dev)
    except Exception as exc:
        raise ModelError(f"TVM cannot set up {folder} on device {device}: {exc}", offending=params_rel,
                         hint="check that the board has the device the module was compiled for") from exc
    inputs = [TensorSpec(i["name"], dtype_to_kserve(i.get("dtype", "float32")), [int(d) for d in i["shape"]])
              for i in meta.get("inputs", [])]
    out_names = [str(n) for n in meta.get("outputs", [])]
    session = TVMSession(tvm, vm, dev, str(meta.get("entry") or "main"), params, [t.name for t in inputs], out_names)
    # output specs: one run of zeros gives the exact static shapes and dtypes the module returns
    try:
        probe = session.run(None, {t.name: np.zeros(t.shape, dtype=np.dtype(i.get("dtype", "float32")))
                                   for t, i in zip(inputs, meta.get("inputs", []), strict=True)})
    except Exception as exc:
        raise ModelError(f"the compiled module {folder} cannot run a request: {exc}", offending=lib_rel,
                         hint="recompile it with `studio compile` and check its parity") from exc
    outputs = [TensorSpec(n, dtype_to_kserve(str(a.dtype)), list(a.shape)) for n, a in zip(out_names, probe, strict=True)]
    target = json.dumps(meta.get("target") or {}, sort_keys=True)
    return TVMServedModel(name=spec["name"], version=manifest.version, path=directory / folder, session=session,
                          inputs=inputs, outputs=outputs, providers=[f"TVM({device}, {meta.get('target_id', '')})"],
                          output_names=out_names, tvm_version=str(meta.get("tvm_version") or ""), target=target,
                          library=lib_rel)

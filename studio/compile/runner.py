"""TVMRunner: a compiled Relax module behind the studio's one runner interface (activate / infer / deactivate).

It loads an artifact folder written by ``compile_model`` (``compiled.json`` + library + ``params.bin``), and
when that folder sits in a signed bundle (a ``manifest.json`` beside it or one level up) it verifies the
signature before loading any code: a library is executable code, so an unverifiable one is never loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from studio.core.errors import BundleError, InputError, ModelError
from studio.core.runner import BaseRunner

META_FILE = "compiled.json"
META_SCHEMA = 1
MANIFEST_NAMES = ("manifest.json",)


@dataclass
class CompiledMeta:
    """What a loader needs to call a compiled module (the ``compiled.json`` beside the library)."""

    inputs: list[dict[str, Any]]  # {name, shape, dtype}
    outputs: list[str]
    param_names: list[str]
    libraries: list[str]  # file names, the loadable one first
    params: str = "params.bin"
    entry: str = "main"
    target: dict[str, Any] = field(default_factory=dict)
    target_id: str = ""
    device: str = "cpu"
    triple: str = ""
    tvm_version: str = ""
    output_specs: list[dict[str, Any]] = field(default_factory=list)  # {name, shape, dtype}; shapes from parity
    schema_version: int = META_SCHEMA
    format: str = "studio-tvm-relax"

    def to_dict(self) -> dict[str, Any]:
        from studio.core.reports import to_jsonable

        return to_jsonable(self)

    @classmethod
    def read(cls, folder: Path) -> CompiledMeta:
        f = Path(folder) / META_FILE
        if not f.is_file():
            raise InputError(f"{folder} is not a compiled artifact folder (no {META_FILE})", offending=str(folder),
                             hint="point at the --out folder of `studio compile`")
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
            known = set(cls.__dataclass_fields__)
            return cls(**{k: v for k, v in data.items() if k in known})
        except (ValueError, TypeError) as exc:
            raise ModelError(f"{f} is not a valid compiled-artifact description: {exc}", offending=str(f),
                             hint="re-run `studio compile` to rewrite the folder") from exc


def find_manifest(folder: Path) -> Path | None:
    """The bundle manifest that covers ``folder``: in it or in its parent (a bundle holding compiled parts)."""
    for d in (folder, folder.parent):
        for name in MANIFEST_NAMES:
            if (d / name).is_file():
                return d / name
    return None


def verify_before_load(folder: Path, trusted_keys: Any) -> str:
    """Verify the bundle signature covering ``folder`` when there is one. Returns what was done.

    Calls ``studio.edge.verify.verify_directory(bundle_dir, trusted)`` (the bundle format's check); ``trusted_keys``
    is a TrustedKeys, one key spec (key file, folder of .pub files) or a list of specs (raw 32-byte keys...).
    Fails closed with BundleError when the manifest exists but cannot be verified.
    """
    manifest = find_manifest(folder)
    if manifest is None:
        return "unsigned (no manifest)"
    if trusted_keys is None:
        raise BundleError(f"{manifest.parent} is signed but no trusted keys were given to check it",
                          offending=str(manifest),
                          hint="pass trusted_keys (a key file, a folder of .pub files or raw keys); only folders "
                               "you built yourself may be loaded with verify_signature=False")
    try:
        from studio.edge.verify import verify_directory
    except ImportError as exc:
        raise BundleError(f"{manifest} is a signed bundle manifest, but the verifier is not available",
                          offending=str(manifest),
                          hint="install the studio's package module, or load with verify_signature=False "
                               "for a folder you built yourself") from exc
    try:
        if isinstance(trusted_keys, (list, tuple)):  # several specs: raw keys, key files, folders of .pub
            from studio.edge.trust import load_trusted_keys

            trusted_keys = load_trusted_keys(*trusted_keys)
        verify_directory(manifest.parent, trusted_keys)
    except BundleError:
        raise
    except Exception as exc:
        raise BundleError(f"signature check of {manifest.parent} failed: {exc}", offending=str(manifest),
                          hint="the bundle was modified or signed by an untrusted key; rebuild and re-sign it") from exc
    return f"verified ({manifest.name})"


class TVMRunner(BaseRunner):
    """Runs a compiled artifact folder (or an in-memory executable) on a TVM device."""

    name = "tvm"

    def __init__(self, artifact: Path | str | None = None, *, trusted_keys: Any = None,
                 verify_signature: bool = True, device: str = "cpu", executable: Any = None,
                 meta: CompiledMeta | None = None, params: list[np.ndarray] | None = None) -> None:
        super().__init__()
        if artifact is None and executable is None:
            raise ValueError("TVMRunner needs an artifact folder or an executable")
        self.artifact = Path(artifact) if artifact is not None else None
        self.trusted_keys = trusted_keys
        self.verify_signature = verify_signature
        self.device_kind = device
        self._executable = executable
        self.meta = meta
        self._param_values = params
        self.signature_state = "not checked"
        self._vm: Any = None
        self._params: list[Any] = []

    def activate_impl(self) -> None:
        from studio.compile.tvm_backend import load_params, require_tvm

        tvm = require_tvm()
        from tvm import relax

        if self.artifact is not None:
            self.meta = CompiledMeta.read(self.artifact)
            if self.verify_signature:
                self.signature_state = verify_before_load(self.artifact, self.trusted_keys)
            lib_name = next((n for n in self.meta.libraries if n.endswith(".so")), None)
            if lib_name is None:
                raise ModelError(f"{self.artifact} holds no loadable library for this host (only "
                                 f"{', '.join(self.meta.libraries)})", offending=str(self.artifact),
                                 hint="link model.tar on the board, or compile for --target llvm to run it here")
            try:
                lib = tvm.runtime.load_module(str(self.artifact / lib_name))
            except Exception as exc:
                raise ModelError(f"TVM cannot load {lib_name}: {exc}", offending=str(self.artifact / lib_name),
                                 hint="a library built for another CPU cannot load here; run it on its board") from exc
            self._params = load_params(self.artifact / self.meta.params, self.meta.param_names)
        else:
            lib = self._executable
            self._params = [tvm.runtime.tensor(v) for v in (self._param_values or [])]
        assert self.meta is not None
        self._dev = tvm.device(self.device_kind, 0)
        if self.device_kind != "cpu":  # parameters live on the accelerator
            self._params = [tvm.runtime.tensor(p.numpy(), self._dev) for p in self._params]
        self._vm = relax.VirtualMachine(lib, self._dev)
        self._tensor = tvm.runtime.tensor

    def infer_impl(self, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        assert self.meta is not None
        try:
            args = [self._tensor(np.ascontiguousarray(feed[i["name"]]), self._dev) for i in self.meta.inputs]
        except KeyError as exc:
            raise InputError(f"input {exc} missing from the feed", offending=str(exc),
                             hint="inputs are: " + ", ".join(i["name"] for i in self.meta.inputs)) from exc
        out = self._vm[self.meta.entry](*args, *self._params)
        values = flatten_vm_output(out)
        return dict(zip(self.meta.outputs, values, strict=False))

    def deactivate_impl(self) -> None:
        self._vm = None
        self._params = []

    def input_metadata(self) -> dict[str, tuple[str, list[Any]]]:
        return {i["name"]: (i["dtype"], list(i["shape"])) for i in (self.meta.inputs if self.meta else [])}


def flatten_vm_output(out: Any) -> list[np.ndarray]:
    """A Relax VM result (a tensor or nested tuples of them) as a flat list of numpy arrays, in order."""
    if hasattr(out, "numpy"):
        return [out.numpy()]
    vals: list[np.ndarray] = []
    for item in out:
        vals.extend(flatten_vm_output(item))
    return vals

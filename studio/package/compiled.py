"""Compiled (TVM Relax) artifacts in edge bundles: what goes in, the runtime config, the arch check.

A ``studio compile`` folder (``compiled.json`` + library + ``params.bin`` + ``compile_report.json``) is packed
under ``compiled/`` in the bundle. Only the library built for the board's CPU goes in: ``model.so`` when it was
linked, else ``model.tar`` (objects that TVM links on the board with its C compiler at load time); which one is
recorded in ``runtime.json`` (``tvm.library_kind``). No TVM import here: packaging runs without apache-tvm.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.errors import InputError, TargetError
from studio.edge.tensors import dtype_to_kserve

COMPILED_PREFIX = "compiled"
META_FILE = "compiled.json"
REPORT_FILE = "compile_report.json"
_TRIPLE_ARCH = {"aarch64": "aarch64", "arm64": "aarch64", "x86_64": "x86_64", "amd64": "x86_64",
                "i686": "x86", "i386": "x86", "armv7": "arm", "arm": "arm", "riscv64": "riscv"}


def is_compiled_dir(path: Path | str) -> bool:
    p = Path(path)
    return p.is_dir() and (p / META_FILE).is_file()


def norm_arch(value: str) -> str:
    v = value.lower()
    return _TRIPLE_ARCH.get(v, v)


def host_arch() -> str:
    return norm_arch(platform.machine())


@dataclass
class CompiledSource:
    """A compile output folder, read for packaging."""

    folder: Path
    meta: dict[str, Any]
    report: dict[str, Any]
    library: str  # the file chosen for the board: "model.so" or "model.tar"
    library_kind: str  # "shared-library" | "object-archive"
    arch: str  # CPU arch of the library ("x86_64", "aarch64"), "" when unknown
    arch_source: str  # how ``arch`` was found
    files: dict[str, Path] = field(default_factory=dict)  # bundle path -> source file

    @property
    def stem(self) -> str:
        model = str(self.report.get("model") or "")
        return Path(model).stem if model else self.folder.name

    @property
    def tvm_version(self) -> str:
        return str(self.meta.get("tvm_version") or self.report.get("tvm_version") or "")

    def parity_summary(self) -> dict[str, Any]:
        p = self.report.get("parity") or {}
        outs = p.get("outputs") or []
        lat = self.report.get("latency") or {}
        return {"status": p.get("status", "not run"), "mode": p.get("mode", ""), "atol": p.get("atol"),
                "rtol": p.get("rtol"),
                "max_abs": max((float(o.get("max_abs", 0.0)) for o in outs), default=None),
                "max_rel": max((float(o.get("max_rel", 0.0)) for o in outs), default=None),
                "outputs": outs, "tvm_ms_median": lat.get("tvm_ms_median"), "ort_ms_median": lat.get("ort_ms_median"),
                "speedup_vs_ort": lat.get("speedup_vs_ort")}


def read_compiled(folder: Path | str) -> CompiledSource:
    """Read a compile output folder; InputError when it is not one or has no library."""
    folder = Path(folder)
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{folder} is not a compiled artifact folder ({META_FILE}: {exc})", offending=str(folder),
                         hint="point at the --out folder of `studio compile`") from exc
    report: dict[str, Any] = {}
    if (folder / REPORT_FILE).is_file():
        try:
            report = json.loads((folder / REPORT_FILE).read_text(encoding="utf-8"))
        except ValueError:
            report = {}
    if report and report.get("status") not in (None, "succeeded"):
        raise InputError(f"the compile in {folder} did not succeed ({report.get('status')})", offending=str(folder),
                         hint="fix the compile first (`studio compile` shows the failing nodes)")
    if meta.get("backend") == "rknn":
        return _read_rknn(folder, meta, report)
    libs = [str(n) for n in meta.get("libraries") or []]
    present = [n for n in libs if (folder / n).is_file()]
    library = next((n for n in present if n.endswith(".so")), None) or next(
        (n for n in present if n.endswith(".tar")), None)
    if library is None:
        raise InputError(f"{folder} holds no compiled library (expected one of {', '.join(libs) or 'model.so'})",
                         offending=str(folder), hint="re-run `studio compile`; the folder is incomplete")
    params = str(meta.get("params") or "params.bin")
    if not (folder / params).is_file():
        raise InputError(f"{folder} has no {params}", offending=str(folder / params),
                         hint="re-run `studio compile`; the folder is incomplete")
    from studio.edge.elf import elf_arches

    arches = elf_arches(folder / library)  # empty for a truncated tar or a non-ELF file: the metadata decides
    if len(arches) == 1:
        arch, how = norm_arch(next(iter(arches))), f"ELF header of {library}"
    elif len(arches) > 1:
        arch, how = ",".join(sorted(arches)), f"ELF headers of {library}"
    else:
        triple = str(meta.get("triple") or (meta.get("target") or {}).get("mtriple") or "")
        if triple:
            arch, how = norm_arch(triple.split("-")[0]), f"target triple {triple}"
        else:  # llvm without a triple: built for the compiling host
            host = str(report.get("host") or "")
            arch = norm_arch(host.split("-")[-1]) if host else ""
            how = f"compiled on host {host}" if host else "unknown"
    files = {f"{COMPILED_PREFIX}/{library}": folder / library, f"{COMPILED_PREFIX}/{params}": folder / params,
             f"{COMPILED_PREFIX}/{META_FILE}": folder / META_FILE}
    if (folder / REPORT_FILE).is_file():
        files[f"{COMPILED_PREFIX}/{REPORT_FILE}"] = folder / REPORT_FILE
    return CompiledSource(folder=folder, meta=meta, report=report, library=library,
                          library_kind="shared-library" if library.endswith(".so") else "object-archive",
                          arch=arch, arch_source=how, files=files)


def _read_rknn(folder: Path, meta: dict[str, Any], report: dict[str, Any]) -> CompiledSource:
    """A `studio compile --backend rknn` folder: the .rknn (the board's NPU runs it), its source ONNX (the x86
    simulator rebuilds from it) and the metadata; ``arch`` is the NPU platform it was built for."""
    rknn = str((meta.get("libraries") or ["model.rknn"])[0])
    source = str(meta.get("source_onnx") or "model.onnx")
    for name in (rknn, source):
        if not (folder / name).is_file():
            raise InputError(f"{folder} has no {name}", offending=str(folder / name),
                             hint="re-run `studio compile --backend rknn`; the folder is incomplete")
    files = {f"{COMPILED_PREFIX}/{n}": folder / n for n in (rknn, source, META_FILE)}
    if (folder / REPORT_FILE).is_file():
        files[f"{COMPILED_PREFIX}/{REPORT_FILE}"] = folder / REPORT_FILE
    return CompiledSource(folder=folder, meta=meta, report=report, library=rknn, library_kind="rknn",
                          arch=str(meta.get("platform") or ""), arch_source="compiled.json (rknn-toolkit2 "
                          f"{meta.get('toolkit_version', '?')} target_platform)", files=files)


def runtime_name(src: CompiledSource) -> str:
    """The agent runtime that serves the module: "tvm", or the compile backend's ("rknn")."""
    return "rknn" if src.library_kind == "rknn" else "tvm"


def runtime_config(src: CompiledSource) -> dict[str, Any]:
    """The runtime's block of runtime.json (``tvm`` or ``rknn``)."""
    if src.library_kind != "rknn":
        return tvm_runtime_config(src)
    m = src.meta
    return {"toolkit": "rknn-toolkit2", "toolkit_version": m.get("toolkit_version", ""), "platform": src.arch,
            "dtype": m.get("dtype", "fp16"), "model": f"{COMPILED_PREFIX}/{src.library}",
            "source_onnx": f"{COMPILED_PREFIX}/{m.get('source_onnx') or 'model.onnx'}",
            "meta": f"{COMPILED_PREFIX}/{META_FILE}",
            "report": f"{COMPILED_PREFIX}/{REPORT_FILE}" if f"{COMPILED_PREFIX}/{REPORT_FILE}" in src.files else None,
            "install": "python3 -m pip install rknn-toolkit-lite2 (on the board)",
            "note": "the board's rknn-toolkit-lite2 runs model.rknn; an x86 agent rebuilds model.onnx in the "
                    "toolkit's simulator (it cannot run a .rknn)"}


def requirements(src: CompiledSource) -> dict[str, Any]:
    """What the signed manifest records the module needs: the toolkit version and platform (rknn), TVM's."""
    if src.library_kind == "rknn":
        return {"rknn": {"toolkit": "rknn-toolkit2", "toolkit_version": src.meta.get("toolkit_version", ""),
                         "platform": src.arch, "dtype": src.meta.get("dtype", "fp16")}}
    return {"tvm": {"version": src.tvm_version, "arch": src.arch}}


def check_arch(src: CompiledSource, board_id: str, board_arch: str, force: bool, board_npu: str = "") -> str | None:
    """Refuse a library built for another CPU than the board's, or a .rknn built for another NPU (unless
    ``force``); returns a warning or None."""
    if src.library_kind == "rknn":
        if src.arch == board_npu:
            return None
        return _mismatch(src, force,
                         f"the .rknn in {src.folder} is built for {src.arch or 'an unknown NPU'} ({src.arch_source}), "
                         f"but board {board_id}'s NPU target is {board_npu or 'not an RKNN platform'}",
                         "; the agent refuses it at load",
                         f"compile for the board: `studio compile MODEL.onnx --target {board_id} --backend rknn`, "
                         "then package that folder; or --force")
    if not src.arch or src.arch == norm_arch(board_arch):
        return None if src.arch else "the compiled library's CPU architecture is unknown; not checked"
    return _mismatch(src, force,
                     f"the compiled module in {src.folder} is built for {src.arch} ({src.arch_source}, target "
                     f"{src.meta.get('target_id') or src.meta.get('target')}), but board {board_id}'s CPU is "
                     f"{board_arch}", "",
                     f"compile for the board: `studio compile MODEL.onnx --target {board_id} --out DIR` (an llvm "
                     "build targets this host), then package that folder; or --force")


def _mismatch(src: CompiledSource, force: bool, msg: str, forced_note: str, hint: str) -> str:
    """With ``force`` the mismatch is a warning (``forced_note`` added to it); without, a TargetError."""
    if force:
        return f"{msg} (packaged anyway with --force{forced_note})"
    raise TargetError(msg, offending=str(src.folder / src.library), hint=hint)


def io_specs(src: CompiledSource) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """KServe-style input/output specs from compiled.json (outputs: shapes from the parity run when known)."""
    inputs = [{"name": i["name"], "datatype": dtype_to_kserve(i.get("dtype", "float32")), "shape": list(i["shape"])}
              for i in src.meta.get("inputs", [])]
    specs = {o.get("name"): o for o in src.meta.get("output_specs") or []}
    parity = {o.get("output"): o for o in (src.report.get("parity") or {}).get("outputs") or []}
    outputs = []
    for name in src.meta.get("outputs", []):
        s = specs.get(name) or {}
        shape = s.get("shape") or (parity.get(name) or {}).get("shape") or []
        outputs.append({"name": name, "datatype": dtype_to_kserve(s["dtype"]) if s.get("dtype") else "UNKNOWN",
                        "shape": list(shape)})
    return inputs, outputs


def tvm_runtime_config(src: CompiledSource) -> dict[str, Any]:
    """The ``tvm`` block of runtime.json: what the board needs to load the module."""
    ver = src.tvm_version
    return {"version": ver, "target": src.meta.get("target") or {}, "target_id": src.meta.get("target_id", ""),
            "device": src.meta.get("device", "cpu"), "arch": src.arch, "arch_source": src.arch_source,
            "library": f"{COMPILED_PREFIX}/{src.library}", "library_kind": src.library_kind,
            "params": f"{COMPILED_PREFIX}/{src.meta.get('params') or 'params.bin'}",
            "meta": f"{COMPILED_PREFIX}/{META_FILE}",
            "report": f"{COMPILED_PREFIX}/{REPORT_FILE}" if f"{COMPILED_PREFIX}/{REPORT_FILE}" in src.files else None,
            "install": f"python3 -m pip install 'apache-tvm=={ver}'" if ver and ver[0].isdigit()
            else "python3 -m pip install apache-tvm",
            "link_note": "" if src.library_kind == "shared-library" else
            "model.tar holds objects: TVM links them with the board's C compiler (gcc) when it loads them"}


def compat_verdict(src: CompiledSource) -> str:
    """The compatibility verdict of a compiled module: its parity against ONNX Runtime."""
    status = str((src.report.get("parity") or {}).get("status", ""))
    return {"passed": "pass", "failed": "fail"}.get(status, "unknown")

"""A candidate's recipe: the studio's own fixes and the target's build options, as data and as the commands
that replay it by hand (``studio fix`` then, for compiled targets, ``studio compile``).

The recipe goes through ``studio.optimize.pipeline.transform`` in the search and through ``studio fix`` in the
replay: the same function, so the same bytes.
"""

from __future__ import annotations

import shlex
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

RKNN_TARGETS = ("rk3588", "rk3576", "rk3566")


@dataclass(frozen=True)
class Recipe:
    static: tuple[tuple[str, int], ...] = ()  # symbolic dim -> size
    simplify: bool = False
    unfuse: bool = False
    drop_nan_guards: bool = False
    host_split: bool = False
    precision: str = "fp32"  # the ONNX's: fp32 | fp16 | int8 (dynamic) | int8-static
    keep_fp32: tuple[str, ...] = ()  # block list of fp16 / int8-static
    build: str = ""  # the target compiler's own precision (rknn: fp16 | int8)
    auto_hybrid: float | None = None  # rknn int8: per-layer cosine below which layers stay float16
    notes: tuple[str, ...] = field(default=(), compare=False)

    def key(self) -> str:
        d = asdict(self)
        d.pop("notes")
        return repr(sorted(d.items()))

    def structure(self) -> Recipe:
        """The same graph changes at fp32 with the target's default build (the search's first round)."""
        return replace(self, precision="fp32", keep_fp32=(), build="", auto_hybrid=None)

    def label(self) -> str:
        parts = []
        if self.static:
            parts.append("static")
        if self.simplify:
            parts.append("simplify")
        if self.unfuse:
            parts.append("unfuse")
        if self.drop_nan_guards:
            parts.append("no-nan-guard")
        if self.host_split:
            parts.append("host-split")
        prec = self.build or self.precision
        if self.build and self.precision != "fp32":
            prec = f"{self.precision}+{self.build}"
        if self.auto_hybrid is not None:
            prec += f" hybrid@{self.auto_hybrid:g}"
        if self.keep_fp32:
            prec += f" (+{len(self.keep_fp32)} kept float)"
        return " + ".join(parts or ["as exported"]) + f" | {prec}"

    def fix_steps(self, target: str, calibration: Path | None, profile_dirs: list[Path] | None = None) -> Any:
        from studio.optimize.pipeline import FixSteps

        return FixSteps(static=dict(self.static) or None, simplify=self.simplify, unfuse=self.unfuse,
                        drop_nan_guards=self.drop_nan_guards, host_split=target if self.host_split else None,
                        precision=self.precision, keep_fp32=list(self.keep_fp32), calibration=calibration,
                        profile_dirs=profile_dirs)

    def needs_fix(self) -> bool:
        return bool(self.static or self.simplify or self.unfuse or self.drop_nan_guards or self.host_split
                    or self.precision != "fp32")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["static"] = dict(self.static)
        d["keep_fp32"], d["notes"] = list(self.keep_fp32), list(self.notes)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Recipe:
        d = dict(d)
        d["static"] = tuple(sorted((k, int(v)) for k, v in (d.get("static") or {}).items()))
        d["keep_fp32"] = tuple(d.get("keep_fp32") or ())
        d["notes"] = tuple(d.get("notes") or ())
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


def _q(p: Path | str) -> str:
    return shlex.quote(str(p))


def fix_command(r: Recipe, source: Path, out: Path, target: str, calibration: Path | None) -> list[str]:
    """``studio fix ...`` writing ``out`` (and, given ``calibration``, the samples as ``out``'s inputs beside it);
    empty when the recipe changes nothing and needs no samples: the source is used as is."""
    if not r.needs_fix() and calibration is None:
        return []
    cmd = ["studio", "fix", _q(source), "--out", _q(out)]
    if r.static:
        cmd += ["--static", ",".join(f"{k}={v}" for k, v in r.static)]
    if r.simplify:
        cmd.append("--simplify")
    if r.unfuse:
        cmd.append("--unfuse-attention")
    if r.drop_nan_guards:
        cmd.append("--drop-nan-guards")
    if r.host_split:
        cmd += ["--host-split", target]
    if r.precision == "fp16":
        cmd.append("--fp16")
    elif r.precision == "int8":
        cmd.append("--int8")
    elif r.precision == "int8-static":
        cmd.append("--int8-static")
    if r.keep_fp32:
        cmd += ["--keep-fp32", _q(",".join(r.keep_fp32))]
    if calibration is not None:
        cmd += ["--calibration", _q(calibration)]
    cmd += ["--target", target]
    return [" ".join(cmd)]


def compile_command(r: Recipe, model: Path, out: Path, target: str) -> list[str]:
    """The target compiler's command for a recipe's device graph (none for ONNX-consuming runtimes)."""
    if target in RKNN_TARGETS:
        cmd = ["studio", "compile", _q(model), "--backend", "rknn", "--target", target, "--out", _q(out), "--force"]
        if r.build == "int8":
            cal = model.parent / f"{model.stem}.calibration"
            cmd += ["--quantize", "int8", "--calibration", _q(cal)]
            if r.auto_hybrid is not None:
                cmd += ["--auto-hybrid", f"{r.auto_hybrid:g}"]
        return [" ".join(cmd)]
    if target == "tvm-relax":
        return [" ".join(["studio", "compile", _q(model), "--target", "llvm", "--out", _q(out), "--force"])]
    return []

"""The module the registry imports on first use: ``verifier(name)``, and the build / simulate calls that the
compile path (``studio compile --backend rknn``, a later step) and the parity tests use.

No toolkit import here either: each call is one worker request under the plugin's environment.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from studio.core.errors import InputError
from studio_rknn import client
from studio_rknn import env as envmod
from studio_rknn.manifest import PLATFORMS
from studio_rknn.verifier import RknnVerifier, static_inputs

__all__ = ["PLATFORMS", "RknnVerifier", "accuracy", "build_rknn", "simulate", "verifier", "verifiers"]


def verifiers() -> list[str]:
    return [f"rknn-{p}" for p in PLATFORMS]


def verifier(name: str) -> RknnVerifier:
    """``rknn-rk3588`` -> the verifier for that platform (its ``target`` is the platform's profile id)."""
    platform = name.removeprefix("rknn-")
    if platform not in PLATFORMS:
        raise InputError(f"unknown rknn verifier {name!r}", offending=name,
                         hint="known: " + ", ".join(verifiers()))
    return RknnVerifier(name=name, target=platform, platform=platform)


def _ready(env: Path | None) -> None:
    status = envmod.check_env(env)
    if not status.ok:
        raise client.WorkerError(status.reason)


def build_rknn(model: Path, output: Path, *, shapes: dict[str, list[int]] | None = None, platform: str = "rk3588",
               dataset: Path | None = None, env: Path | None = None, mi: Any = None,
               auto_hybrid: float | None = None) -> dict[str, Any]:
    """Export ``output`` (.rknn): fp16, or int8 (w8a8) calibrated on ``dataset`` (a text file, one line per
    sample, the .npy path of each input separated by spaces, as the toolkit reads it); ``auto_hybrid``: int8 with
    the layers below that per-layer cosine kept in float16 (the toolkit's auto_hybrid)."""
    _ready(env)
    mi = mi or static_inputs(Path(model), shapes)  # ``mi``: the caller's, when it read the model already
    with tempfile.TemporaryDirectory(prefix="studio-rknn-") as tmp:
        return client.call("build", env=env, model=str(Path(model).resolve()), inputs=mi.inputs, platform=platform,
                           crop=mi.resized,
                           output=str(Path(output).resolve()), dataset=str(dataset) if dataset else None,
                           auto_hybrid=auto_hybrid, log=str(Path(tmp) / "build.log"))


def simulate(model: Path, feeds: dict[str, Any], *, platform: str = "rk3588", env: Path | None = None,
             dataset: Path | None = None, mi: Any = None, auto_hybrid: float | None = None) -> list[Any]:
    """Outputs of the toolkit's x86 simulator for ``feeds`` (name -> array), in the model's output order."""
    import numpy as np

    _ready(env)
    mi = mi or static_inputs(Path(model), {k: list(np.shape(v)) for k, v in feeds.items()})
    with tempfile.TemporaryDirectory(prefix="studio-rknn-") as tmp:
        arrays = []
        for spec in mi.inputs:
            p = Path(tmp) / f"in_{len(arrays)}.npy"
            np.save(p, np.asarray(feeds[spec["name"]]))
            arrays.append(str(p))
        res = client.call("infer", env=env, model=str(Path(model).resolve()), inputs=mi.inputs, platform=platform,
                          crop=mi.resized,
                          arrays=arrays, out_dir=str(Path(tmp) / "out"), log=str(Path(tmp) / "infer.log"),
                          dataset=str(dataset) if dataset else None, auto_hybrid=auto_hybrid)
        return [np.load(p) for p in res["outputs"]]


def accuracy(model: Path, feeds: dict[str, Any], dataset: Path, out_dir: Path, *, platform: str = "rk3588",
             env: Path | None = None, mi: Any = None, auto_hybrid: float | None = None) -> list[dict[str, Any]]:
    """The toolkit's accuracy_analysis of the int8 build on one sample: per-layer cosine / euclidean error
    (rows keyed by tensor name), its files left in ``out_dir``."""
    import numpy as np

    from studio_rknn.logparse import parse_accuracy

    _ready(env)
    mi = mi or static_inputs(Path(model), {k: list(np.shape(v)) for k, v in feeds.items()})
    out_dir.mkdir(parents=True, exist_ok=True)
    arrays = []
    for spec in mi.inputs:
        p = out_dir / f"sample_{len(arrays)}.npy"
        np.save(p, np.asarray(feeds[spec["name"]]))
        arrays.append(str(p))
    client.call("accuracy", env=env, model=str(Path(model).resolve()), inputs=mi.inputs, platform=platform,
                crop=mi.resized,
                arrays=arrays, dataset=str(dataset), out_dir=str(out_dir / "analysis"),
                log=str(out_dir / "accuracy.log"), auto_hybrid=auto_hybrid)
    return parse_accuracy((out_dir / "analysis" / "error_analysis.txt").read_text(encoding="utf-8"))

"""The built-in verifiers by name: the plugin module that ``builtin-verifiers``' manifest points at."""

from __future__ import annotations

from studio.verify.api import Verifier


def verifier(name: str) -> Verifier:
    if name == "ort-cpu":
        from studio.verify.ort_cpu import verifier as ort

        return ort()
    if name == "tvm-relax":
        from studio.verify.tvm_relax import verifier as tvm

        return tvm()
    raise KeyError(f"no built-in verifier '{name}' (built-in: ort-cpu, tvm-relax)")

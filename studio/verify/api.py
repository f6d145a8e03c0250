"""What a verifier is and what it answers: the one contract built-in and plugin verifiers share.

A verifier runs a real tool on a model (an ONNX Runtime session, TVM's ``from_onnx``, OpenVINO's
``query_model``, an rknn-toolkit2 build) and says per node what the tool did with it. It never imports a heavy
SDK at module import: ``available()`` answers cheaply (find_spec, an environment on disk) and ``verify()``
does the work (in a subprocess where the tool's environment is isolated). Everything here is plain data, so a
verifier living in another process can send it as JSON (``VerifyResult.to_dict`` / ``from_dict``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

SCHEMA_VERSION = 1
PLACEMENTS = ("accelerator", "cpu", "failed", "")  # where the tool put the node ("" = the tool does not say)


@dataclass
class NodeCheck:
    """The tool's answer for one ONNX node (by the node's name in the model given to ``verify``)."""

    node: str
    op_type: str
    verdict: str  # studio.inspect.report.VERDICTS: "supported" | "risky" | "unsupported" | "unknown"
    placement: str = ""  # PLACEMENTS: e.g. rknn "accelerator" (NPU) vs "cpu" (fallback)
    message: str = ""  # the tool's own words, verbatim where it gave any
    domain: str = ""


@dataclass
class VerifyResult:
    """One verifier's run on one model. ``ran`` False: the tool could not even load the model (see error)."""

    verifier: str  # e.g. "ort-cpu", "tvm-relax", "openvino-cpu", "rknn-rk3588"
    target: str  # the target profile id it confirms or contradicts
    tool: str  # tool and version that answered, e.g. "onnxruntime 1.23.2", "rknn-toolkit2 2.5.0"
    ran: bool
    nodes: list[NodeCheck] = field(default_factory=list)
    error: str = ""  # model-level failure in the tool's words (with ran=False, or a partial run)
    seconds: float = 0.0
    shapes: dict[str, list[int]] = field(default_factory=dict)  # the static shapes it was run at, if any
    notes: list[str] = field(default_factory=list)  # e.g. "NPU rows from the published list, not the tool"
    # the tool itself crashed (its trace: an internal exception, a signal, a hang), not a verdict on the model
    crash: str = ""
    schema_version: int = SCHEMA_VERSION

    def by_node(self) -> dict[str, NodeCheck]:
        return {n.node: n for n in self.nodes}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> VerifyResult:
        d = dict(d)
        d["nodes"] = [NodeCheck(**n) for n in d.get("nodes", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in d.items() if k in known})


@runtime_checkable
class Verifier(Protocol):
    """Registered by a plugin manifest under ``provides: {"verifiers": [name, ...]}``; the plugin's module
    has ``verifier(name) -> Verifier``."""

    name: str
    target: str

    def available(self) -> tuple[bool, str]:
        """(usable, why not / tool and version); cheap: must not import the tool's SDK in this process."""
        ...

    def verify(self, model: Path, shapes: dict[str, list[int]] | None = None) -> VerifyResult:
        """Run the tool on ``model`` (at ``shapes`` where the tool needs static ones)."""
        ...


def importable(module: str) -> bool:
    """``module`` is installed here: found on the path, not imported (what a cheap ``available()`` asks)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False

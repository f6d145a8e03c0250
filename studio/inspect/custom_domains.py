"""The studio's own custom-op domain, as the inspector sees it.

``studio.fused`` (written by ``studio fix --fuse-attention``) is the one declared custom domain: a model that
imports it is not flagged by the domain policy. Only runtimes that can register the domain's kernels load it:
ONNX Runtime with the studio.fused runtime (onnxruntime-extensions Python op, or a native custom-op library);
every other target reports the nodes as unsupported (its profile does not list the domain).
"""

from __future__ import annotations

from studio.core.catalogue import N_
from studio.inspect.profile_model import OpRule

STUDIO_FUSED = "studio.fused"
# domain -> op types the studio implements in it
STUDIO_DOMAINS: dict[str, tuple[str, ...]] = {STUDIO_FUSED: ("FusedAttention",)}

ORT_REASON = N_("loads only with the studio.fused kernels registered: onnxruntime-extensions' Python op "
                "(studio.optimize.custom_ops.make_session) or a native library (--custom-op-lib)")
UNSUPPORTED_HINT = N_("this target cannot load the studio's fused ops: deploy the unfused model here (fix without "
                      "--fuse-attention), or provide a {domain} kernel library for the target")


def declared_in(opsets: dict[str, int]) -> list[str]:
    """The studio domains a model imports: declared automatically."""
    return [d for d in STUDIO_DOMAINS if d in opsets]


def ort_rules() -> dict[str, dict[str, OpRule]]:
    """Rules for the ONNX Runtime profile: runnable, but only where the kernels are registered (risky)."""
    return {d: {op: OpRule(status="risky", reason=ORT_REASON) for op in ops} for d, ops in STUDIO_DOMAINS.items()}

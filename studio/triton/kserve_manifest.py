"""KServe manifests for a Triton model repository: a ``ServingRuntime`` running tritonserver on the repository and
an ``InferenceService`` whose predictor (model format ``triton``, protocol v2) loads it from a storage URI.

Resources and autoscaling come from the SLA tier: the memory limit leaves the tier's ``memory_max_pct`` headroom
over the request, and each tier has a replica / concurrency profile (real-time keeps a warm replica and a low
concurrency target; offline scales to zero). The repository goes through ``studio.triton.repo_check`` first, so a
manifest is never written for a repository tritonserver would refuse. Plain dicts here; ``kserve_validate`` checks
them against the clients' models.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from studio.core.errors import InputError, ValidationError
from studio.core.reports import Report
from studio.triton.gpu import TRITON_IMAGE

SCHEMA_VERSION = 1
RUNTIME_API = "serving.kserve.io/v1alpha1"
SERVICE_API = "serving.kserve.io/v1beta1"
# what KServe's storage initializer downloads from (https also covers Azure blob URLs); oci: a modelcar image
STORAGE_SCHEMES = {"gs": "gs://BUCKET/PATH", "s3": "s3://BUCKET/PATH", "pvc": "pvc://CLAIM/PATH",
                   "http": "http://HOST/PATH.tar.gz", "https": "https://HOST/PATH", "hf": "hf://ORG/MODEL",
                   "oci": "oci://REGISTRY/IMAGE:TAG", "hdfs": "hdfs://HOST/PATH", "webhdfs": "webhdfs://HOST/PATH"}
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_MI = 2**20


@dataclass(frozen=True)
class ClusterProfile:
    """Replicas and per-replica concurrency target of one tier (KPA ``scaleMetric: concurrency``)."""

    min_replicas: int
    max_replicas: int
    concurrency_target: int
    cpu_request: str
    cpu_limit: str


PROFILES = {"L1": ClusterProfile(1, 4, 4, "2", "4"),   # real-time: a warm replica, queueing kept short
            "L2": ClusterProfile(1, 8, 16, "1", "2"),  # batch: deeper queues per replica, wider fan-out
            "L3": ClusterProfile(0, 4, 32, "1", "2")}  # offline: scale to zero between jobs
DEFAULT_PROFILE = "L2"


@dataclass
class KServeOptions:
    repo: Path
    name: str
    storage_uri: str
    sla_tier: str = "L1"
    tiers_file: Path | None = None
    service_name: str | None = None
    namespace: str | None = None
    image: str = TRITON_IMAGE
    min_replicas: int | None = None
    max_replicas: int | None = None
    concurrency_target: int | None = None


@dataclass
class KServeManifests(Report):
    """What was generated and where each number came from (``sizing``)."""

    schema_version: int = SCHEMA_VERSION
    repo: str = ""
    model: str = ""
    service: str = ""
    runtime: str = ""
    storage_uri: str = ""
    sla_tier: str = ""
    documents: list[dict[str, Any]] = field(default_factory=list)
    sizing: dict[str, str] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)
    path: str = ""


def check_storage_uri(uri: str) -> str:
    """The URI when KServe's storage initializer can read it; an InputError naming it and the accepted schemes."""
    accepted = ", ".join(STORAGE_SCHEMES.values())
    parts = urlsplit(uri.strip())
    scheme = parts.scheme.lower()
    if scheme not in STORAGE_SCHEMES:
        what = f"scheme {scheme}://" if scheme else "no scheme (a local path?)"
        raise InputError(f"storage URI {uri!r} has {what}, which KServe's storage initializer does not read",
                         offending="--storage-uri",
                         hint=f"upload the repository and give one of: {accepted}")
    if not parts.netloc:
        raise InputError(f"storage URI {uri!r} names no bucket, claim or host after {scheme}://",
                         offending="--storage-uri",
                         hint=f"for example {STORAGE_SCHEMES[scheme]} (accepted: {accepted})")
    if scheme == "pvc" and not _DNS_LABEL.fullmatch(parts.netloc):
        raise InputError(f"storage URI {uri!r}: {parts.netloc!r} is not a PersistentVolumeClaim name "
                         "(lower-case letters, digits and '-')", offending="--storage-uri",
                         hint=f"pvc://CLAIM/PATH with CLAIM as `kubectl get pvc` lists it (accepted: {accepted})")
    return uri.strip()


def _dns_name(text: str, what: str, flag: str) -> str:
    if len(text) > 63 or not _DNS_LABEL.fullmatch(text):
        raise InputError(f"{what} {text!r} is not a Kubernetes name (at most 63 lower-case letters, digits and "
                         "'-', starting and ending with a letter or digit)", offending=flag,
                         hint=f"give {flag} NAME with a valid name")
    return text


def read_repository(repo: Path, name: str) -> tuple[list[str], int, bool]:
    """Model names, bytes on disk and whether any instance group wants a GPU, once the repository checks out."""
    from studio.triton import config as tc
    from studio.triton.repo_check import check_repo

    report = check_repo(repo)  # a missing folder is its InputError
    models = [m.name for m in report.models]
    if not models:
        raise InputError(f"repository {repo} holds no model, so there is nothing to serve", offending=str(repo),
                         hint="build one with `studio triton build-repo MODEL.onnx --repo DIR --name NAME`")
    if report.errors:
        shown = "\n".join(f.render() for f in report.errors[:5])
        raise ValidationError(f"repository {repo} fails `studio triton check` ({len(report.errors)} error(s)); "
                              f"tritonserver would refuse it:\n{shown}", offending=str(repo),
                              hint=f"fix it first: studio triton check --repo {repo}")
    if name not in models:
        raise InputError(f"model {name!r} is not in repository {repo} (it has: {', '.join(models)})",
                         offending="--name", hint="give --name one of the repository's models")
    size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
    kinds = [g.kind for m in models for g in tc.load_config(repo / m / "config.pbtxt").instance_group]
    gpu = any(tc.pb2().ModelInstanceGroup.Kind.Name(k) == "KIND_GPU" for k in kinds)
    return models, size, gpu


def _resources(size: int, memory_max_pct: float, profile: ClusterProfile, gpu: bool) -> tuple[dict, dict]:
    """Request: 512 MiB of server plus twice the models' bytes (ORT keeps weights and arenas); limit: the request
    over the tier's memory ceiling, so a replica at its request sits exactly at ``memory_max_pct``."""
    request_mi = 512 + math.ceil(2 * size / _MI)
    limit_mi = math.ceil(request_mi * 100 / memory_max_pct)
    requests = {"cpu": profile.cpu_request, "memory": f"{request_mi}Mi"}
    limits = {"cpu": profile.cpu_limit, "memory": f"{limit_mi}Mi"}
    if gpu:
        limits["nvidia.com/gpu"] = "1"
    return requests, limits


def build_manifests(opts: KServeOptions) -> KServeManifests:
    """The ServingRuntime and InferenceService documents (plain dicts) for ``opts``; nothing is written."""
    from studio.telemetry.sla import get_tier

    storage_uri = check_storage_uri(opts.storage_uri)
    tier, _cost = get_tier(opts.sla_tier, opts.tiers_file)
    repo = Path(opts.repo)
    models, size, gpu = read_repository(repo, opts.name)
    service = _dns_name(opts.service_name or opts.name.lower().replace("_", "-"), "InferenceService name",
                        "--service-name")
    runtime = f"{service}-triton"
    base = PROFILES.get(tier.name)
    sizing = {"memory": f"request 512Mi + 2 x {size / _MI:.1f} MiB of models; limit at tier {tier.name}'s "
                        f"memory_max_pct {tier.memory_max_pct:g}%",
              "profile": f"tier {tier.name} ({tier.title})" if base else
                         f"tier {tier.name} has no cluster profile: {DEFAULT_PROFILE}'s used"}
    prof = base or PROFILES[DEFAULT_PROFILE]
    min_r = prof.min_replicas if opts.min_replicas is None else opts.min_replicas
    max_r = prof.max_replicas if opts.max_replicas is None else opts.max_replicas
    target = prof.concurrency_target if opts.concurrency_target is None else opts.concurrency_target
    if min_r < 0 or max_r < max(min_r, 1) or target < 1:
        raise InputError(f"replicas {min_r}..{max_r} with concurrency target {target} cannot scale",
                         offending="--min-replicas/--max-replicas/--concurrency-target",
                         hint="need 0 <= min <= max, max >= 1 and a target >= 1")
    for key, given in (("replicas", opts.min_replicas is not None or opts.max_replicas is not None),
                       ("concurrency", opts.concurrency_target is not None)):
        sizing[key] = "given on the command line" if given else sizing["profile"]
    requests, limits = _resources(size, tier.memory_max_pct, prof, gpu)
    meta: dict[str, Any] = {"labels": {"app.kubernetes.io/managed-by": "deployment-studio",
                                       "studio.sla-tier": tier.name}}
    if opts.namespace:
        meta["namespace"] = _dns_name(opts.namespace, "namespace", "--namespace")
    runtime_doc = {
        "apiVersion": RUNTIME_API, "kind": "ServingRuntime", "metadata": {"name": runtime, **meta},
        "spec": {"supportedModelFormats": [{"name": "triton", "version": "2", "autoSelect": True}],
                 "protocolVersions": ["v2", "grpc-v2"], "multiModel": False,
                 "containers": [{"name": "kserve-container", "image": opts.image,
                                 "args": ["tritonserver", "--model-repository=/mnt/models", "--http-port=8080",
                                          "--grpc-port=9000", "--allow-http=true", "--allow-grpc=true"],
                                 "ports": [{"containerPort": 8080, "name": "http1", "protocol": "TCP"}],
                                 "resources": {"requests": dict(requests), "limits": dict(limits)}}]}}
    service_doc = {
        "apiVersion": SERVICE_API, "kind": "InferenceService",
        "metadata": {"name": service, **meta,
                     "annotations": {"studio.entry-model": opts.name, "studio.repository": str(repo)}},
        "spec": {"predictor": {
            "minReplicas": min_r, "maxReplicas": max_r, "scaleMetric": "concurrency", "scaleTarget": target,
            "model": {"modelFormat": {"name": "triton", "version": "2"}, "runtime": runtime,
                      "protocolVersion": "v2", "storageUri": storage_uri,
                      "resources": {"requests": requests, "limits": limits}}}}}
    return KServeManifests(repo=str(repo), model=opts.name, service=service, runtime=runtime,
                           storage_uri=storage_uri, sla_tier=tier.name, documents=[runtime_doc, service_doc],
                           sizing=sizing, models=models)


def to_yaml(documents: list[dict[str, Any]]) -> str:
    import yaml

    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False)


def write_manifests(report: KServeManifests, path: Path | str) -> Path:
    """One multi-document YAML (``kubectl apply -f`` reads it), written through a temp file and a rename."""
    from studio.core.atomic import write_text_atomic

    out = write_text_atomic(Path(path), to_yaml(report.documents))
    report.path = str(out)
    return out

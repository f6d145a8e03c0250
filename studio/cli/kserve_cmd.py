"""`studio triton export-kserve REPO --name N --storage-uri URI [--sla-tier L1] [--apply] [--dry-run]`.

Writes a ServingRuntime + InferenceService YAML for the repository, checked against the kserve / kubernetes client
models; ``--apply`` sends it to the cluster of the current kubeconfig, ``--dry-run`` asks for a server-side dry run
(with no cluster: the client-side validation only, and the output says so). Registered by ``triton_cmd``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", help="Triton model repository folder (as `studio triton build-repo` writes it)")
    p.add_argument("--name", required=True, help="the repository's model clients call (the service's name too)")
    p.add_argument("--storage-uri", required=True,
                   help="where the cluster reads the repository: gs://, s3://, pvc://, http(s)://, hf://, oci://")
    p.add_argument("--sla-tier", default="L1", help="resources and autoscaling from this tier (default L1)")
    p.add_argument("--tiers", type=Path, default=None, help="tier definitions (default: the shipped tiers.yaml)")
    p.add_argument("--service-name", help="InferenceService name (default: --name, '_' as '-')")
    p.add_argument("--namespace", help="metadata.namespace (default: the kubeconfig's)")
    p.add_argument("--image", default=None, help="tritonserver image of the ServingRuntime")
    p.add_argument("--min-replicas", type=int, help="override the tier's minReplicas")
    p.add_argument("--max-replicas", type=int, help="override the tier's maxReplicas")
    p.add_argument("--concurrency-target", type=int, help="override the tier's per-replica concurrency target")
    p.add_argument("--out", type=Path, default=None, help="YAML file to write (default: ./SERVICE-kserve.yaml)")
    p.add_argument("--apply", action="store_true", help="create or replace them in the current kubeconfig's cluster")
    p.add_argument("--dry-run", action="store_true",
                   help="server-side dry run when a cluster is configured (nothing persisted); without one, "
                        "client-side validation only")
    p.add_argument("--context", help="kubeconfig context (default: the current one)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    from studio.triton.kserve_manifest import KServeOptions, build_manifests, write_manifests
    from studio.triton.kserve_validate import (
        apply_documents,
        load_kubeconfig,
        require_valid,
        validate_documents,
    )

    opts = KServeOptions(repo=Path(args.repo), name=args.name, storage_uri=args.storage_uri,
                         sla_tier=args.sla_tier, tiers_file=args.tiers, service_name=args.service_name,
                         namespace=args.namespace, min_replicas=args.min_replicas, max_replicas=args.max_replicas,
                         concurrency_target=args.concurrency_target)
    if args.image:
        opts.image = args.image
    report = build_manifests(opts)
    api_client, cluster_note = None, ""
    if args.apply:
        api_client = load_kubeconfig(args.context)  # no cluster: an InputError before anything is written
    elif args.dry_run:
        try:
            api_client = load_kubeconfig(args.context)
        except Exception as exc:  # noqa: BLE001 - no cluster is a normal answer for a dry run
            cluster_note = f"no cluster ({getattr(exc, 'message', exc)}): client-side validation only"
    say = (lambda text: print(text, file=sys.stderr)) if not args.json else None
    validation = validate_documents(report.documents, say)
    require_valid(validation)
    out = write_manifests(report, args.out or Path(f"{report.service}-kserve.yaml"))
    applied: list[str] = []
    if api_client is not None:
        applied = apply_documents(report.documents, api_client, dry_run=args.dry_run or not args.apply,
                                  namespace=args.namespace or "default")
    if args.json:
        data = report.to_dict()
        data["validation"] = {"ok": validation.ok, "source": validation.source, "documents": validation.documents}
        data["cluster"] = applied or cluster_note or "not applied"
        print(json.dumps(data, indent=2))
        return 0
    pred = report.documents[1]["spec"]["predictor"]
    res = pred["model"]["resources"]
    print(f"wrote {out}: ServingRuntime {report.runtime} + InferenceService {report.service} "
          f"(model {report.model}, {len(report.models)} model(s) in {report.repo})")
    print(f"  storageUri {report.storage_uri}")
    print(f"  tier {report.sla_tier}: replicas {pred['minReplicas']}..{pred['maxReplicas']}, concurrency target "
          f"{pred['scaleTarget']}, requests {res['requests']}, limits {res['limits']}")
    for key, why in report.sizing.items():
        print(f"    {key}: {why}")
    print(f"  valid: {validation.source}")
    for line in applied:
        print(f"  {line}")
    if cluster_note:
        print(f"  dry run: {cluster_note}")
    elif not applied:
        print(f"  not applied (add --apply, or: kubectl apply -f {out})")
    return 0

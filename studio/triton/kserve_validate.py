"""Check KServe manifests against the `kserve` / `kubernetes` clients' API models, and apply them to a cluster.

Validation runs in-process where `kserve` is importable beside the studio, else in its cached environment
(``kserve_env``). Applying reads the current kubeconfig through the kubernetes client (``[cluster]`` extra);
``dry_run`` asks the API server for a server-side dry run (``dryRun=All``), nothing is persisted.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from studio.core.errors import DependencyMissing, InputError, StudioError, ValidationError

GROUP = "serving.kserve.io"
PLURALS = {"InferenceService": "inferenceservices", "ServingRuntime": "servingruntimes"}


@dataclass
class ModelValidation:
    """The verdict and its source: which client models, at which versions, and where they ran."""

    ok: bool
    source: str
    documents: list[dict[str, Any]] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [e for d in self.documents for e in d["errors"]]


def validate_documents(documents: list[dict[str, Any]], say: Any = None) -> ModelValidation:
    """Every document rebuilt as the client's model object and serialised back (``kserve_worker``)."""
    if importlib.util.find_spec("kserve") is not None:
        from studio.triton import kserve_worker

        result, where = kserve_worker.validate_documents(documents), "in-process"
    else:
        from studio.triton import kserve_env

        env = kserve_env.ensure_env(say)
        resp = kserve_env.run_worker({"action": "validate", "documents": documents}, env=env)
        if not resp.get("ok"):
            raise StudioError(f"the kserve validation worker failed: {resp.get('error')}", offending=str(env))
        result, where = resp["result"], f"in {env}"
    v = result["versions"]
    docs = result["documents"]
    ok = all(d["round_trip"] and not d["errors"] for d in docs)
    source = (f"kserve {v['kserve']} / kubernetes {v['kubernetes']} client models ({where}), client-side: "
              + ", ".join(f"{d['kind']} -> {d['model'] or '?'}" for d in docs))
    return ModelValidation(ok=ok, source=source, documents=docs)


def require_valid(validation: ModelValidation) -> None:
    if not validation.ok:
        raise ValidationError("the manifests do not pass the KServe client models:\n  "
                              + "\n  ".join(validation.errors), offending="manifests",
                              hint="a bug in the studio's generator, or an option value the models refuse")


def load_kubeconfig(context: str | None = None) -> Any:
    """The kubernetes ApiClient of the current kubeconfig (or the in-cluster service account); an InputError
    saying there is none."""
    try:
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException
    except ImportError as exc:
        raise DependencyMissing.for_module("kubernetes", "cluster", "applying KServe manifests") from exc
    try:
        config.load_kube_config(context=context)
    except (ConfigException, FileNotFoundError, TypeError) as exc:
        try:
            config.load_incluster_config()
        except ConfigException:
            raise InputError(f"no Kubernetes cluster to apply to: no usable kubeconfig ({exc}) and not running "
                             "inside a cluster", offending="--apply",
                             hint="set KUBECONFIG or ~/.kube/config (`kubectl config current-context` must "
                                  "answer), or drop --apply and `kubectl apply -f` the written file") from exc
    return client.ApiClient()


def apply_documents(documents: list[dict[str, Any]], api_client: Any, *, dry_run: bool = False,
                    namespace: str = "default") -> list[str]:
    """Create each document, or replace it when it exists; one line per document saying what the server did."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    api = client.CustomObjectsApi(api_client)
    lines = []
    extra = {"dry_run": "All"} if dry_run else {}
    for doc in documents:
        version = doc["apiVersion"].split("/", 1)[1]
        ns = doc["metadata"].get("namespace", namespace)
        name, plural = doc["metadata"]["name"], PLURALS[doc["kind"]]
        try:
            api.create_namespaced_custom_object(GROUP, version, ns, plural, doc, **extra)
            verb = "created"
        except ApiException as exc:
            if exc.status != 409:
                raise StudioError(f"the cluster refused {doc['kind']} {ns}/{name}: {exc.status} {exc.reason}: "
                                  f"{(exc.body or '')[:400]}", offending=f"{doc['kind']}/{name}") from exc
            current = api.get_namespaced_custom_object(GROUP, version, ns, plural, name)
            body = {**doc, "metadata": {**doc["metadata"],
                                        "resourceVersion": current["metadata"]["resourceVersion"]}}
            api.replace_namespaced_custom_object(GROUP, version, ns, plural, name, body, **extra)
            verb = "replaced"
        lines.append(f"{doc['kind']} {ns}/{name} {verb}" + (" (server-side dry run, nothing persisted)"
                                                             if dry_run else ""))
    return lines

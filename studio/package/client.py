"""Studio side of the edge agent: upload (deploy), status, rollback, over HTTP(S) with the agent's token."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.core.catalogue import tr
from studio.core.errors import (
    BundleError,
    ConnectionFailed,
    InputError,
    ModelError,
    StorageError,
    StudioError,
)
from studio.core.jobs import JobState
from studio.core.reports import Report

UPLOAD_CHUNK = 1 << 20


def read_token_file(path: Path | str) -> str:
    p = Path(path)
    try:
        tok = p.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise InputError(f"cannot read token file {p}: {exc.strerror}", offending=str(p),
                         hint="the agent's --token-file; copy it from the board") from None
    if not tok:
        raise InputError(f"token file {p} is empty", offending=str(p), hint="copy the agent's token file")
    return tok


@dataclass
class DeployReport(Report):
    agent: str
    bundle: str
    name: str
    version: str
    previous: str | None
    warmup_ms: float
    upload_bytes: int
    upload_s: float
    total_s: float
    served_models: list[str] = field(default_factory=list)
    openssf: dict[str, Any] | None = None  # the agent's OpenSSF check (started with --require-openssf)
    schema_version: int = 1

    def render(self) -> str:
        prev = tr(" (was {previous})", previous=self.previous) if self.previous else ""
        return (tr("deployed {name} {version}{prev} to {agent}: {mb} MB in {upload_s} s, warm-up {warmup} ms; "
                   "serving {models}", name=self.name, version=self.version, prev=prev, agent=self.agent,
                   mb=f"{self.upload_bytes / 1e6:.1f}", upload_s=f"{self.upload_s:.2f}", warmup=f"{self.warmup_ms:.1f}",
                   models=", ".join(self.served_models))
                + (tr("; OpenSSF signature by {signer} verified by the agent", signer=self.openssf.get("signer"))
                   if self.openssf else ""))


class AgentClient:
    """Talks to ``studio-agent``; errors come back as StudioErrors carrying the agent's message and hint."""

    def __init__(self, url: str, token: str | None = None, *, verify: bool | str = True,
                 timeout: float = 30.0) -> None:
        if not url.startswith(("http://", "https://")):
            url = "http://" + url
        self.url = url.rstrip("/")
        self.token = token
        self.verify = verify
        self.timeout = timeout

    def _verify(self) -> Any:
        if isinstance(self.verify, str):  # a CA file: httpx wants an SSL context for it
            import ssl

            return ssl.create_default_context(cafile=self.verify)
        return self.verify

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def _request(self, method: str, path: str, **kw: Any) -> Any:
        import httpx

        try:
            with httpx.Client(timeout=kw.pop("timeout", self.timeout), verify=self._verify()) as c:
                r = c.request(method, self.url + path, headers={**self._headers(), **kw.pop("headers", {})}, **kw)
        except httpx.TransportError as exc:
            raise ConnectionFailed(f"cannot reach agent at {self.url}: {exc}", offending=self.url,
                                   hint="is studio-agent running there, and is the port open?") from None
        return self._result(r)

    def _result(self, r: Any) -> Any:
        if r.status_code < 300:
            return r.json() if r.content else None
        try:
            body = r.json()
        except ValueError:
            body = {"error": r.text[:300]}
        msg = body.get("error", f"HTTP {r.status_code}")
        if r.status_code == 507:  # Insufficient Storage: the message names the data folder and its room
            raise StorageError(f"agent {self.url} cannot store the bundle: {msg}",
                               offending=body.get("offending") or self.url, hint=body.get("hint"),
                               details={"status": 507, **(body.get("details") or {})})
        cls: type[StudioError] = {400: InputError, 401: InputError, 403: InputError, 404: InputError, 409: InputError, 413: BundleError,
                                  422: ModelError if body.get("kind") == "model" else BundleError
                                  }.get(r.status_code, StudioError)
        raise cls(f"agent refused: {msg}", offending=body.get("offending") or self.url,
                  hint=body.get("hint"), details={"status": r.status_code, **(body.get("details") or {})})

    def health(self) -> bool:
        import httpx

        try:
            with httpx.Client(timeout=3.0, verify=self._verify()) as c:
                return c.get(self.url + "/v2/health/ready").status_code == 200
        except httpx.TransportError:
            return False

    def probe(self) -> str | None:
        """None when the agent answers ready (no token needed), else why not: the transport's own words."""
        import httpx

        try:
            with httpx.Client(timeout=3.0, verify=self._verify()) as c:
                r = c.get(self.url + "/v2/health/ready")
        except httpx.TransportError as exc:
            return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return None if r.status_code == 200 else f"not ready (HTTP {r.status_code})"

    def status(self) -> dict[str, Any]:
        return self._request("GET", "/agent/status")

    def trust(self) -> dict[str, Any]:
        """Key ids the agent trusts, those pushed over the API, and whether it accepts pushes."""
        return self._request("GET", "/agent/trust")

    def push_trust(self, key_line: str) -> dict[str, Any]:
        """Add a public key line (``ed25519 <base64> NAME``) to the agent's trust store."""
        return self._request("POST", "/agent/trust", json={"key": key_line.strip()})

    def rollback(self, model: str, version: str | None = None) -> dict[str, Any]:
        return self._request("POST", f"/agent/models/{model}/rollback",
                             json={"version": version} if version else None)

    def model_metadata(self, model: str) -> dict[str, Any]:
        """KServe v2 model metadata: name, versions, platform, inputs and outputs (name, datatype, shape)."""
        return self._request("GET", f"/v2/models/{model}")

    def infer(self, model: str, inputs: dict[str, Any], outputs: list[str] | None = None) -> dict[str, Any]:
        """One KServe v2 JSON inference; name -> numpy array (each output's datatype and shape as served)."""
        import numpy as np

        from studio.core.kserve_dtypes import V2_TO_NUMPY, numpy_to_v2

        body: dict[str, Any] = {"inputs": [{"name": n, "shape": list(np.shape(a)), "datatype": numpy_to_v2(
            np.asarray(a).dtype), "data": np.asarray(a).ravel().tolist()} for n, a in inputs.items()]}
        if outputs:
            body["outputs"] = [{"name": n} for n in outputs]
        got = self._request("POST", f"/v2/models/{model}/infer", json=body)
        return {o["name"]: np.asarray(o["data"], dtype=V2_TO_NUMPY.get(o["datatype"], np.float32)
                                      ).reshape(o["shape"]) for o in got.get("outputs", [])}

    def upload(self, bundle: Path | str, job: JobState | None = None) -> dict[str, Any]:
        bundle = Path(bundle)
        if not bundle.is_file():
            raise InputError(f"bundle {bundle} does not exist", offending=str(bundle),
                             hint="build one with `studio package`")
        size = bundle.stat().st_size

        def chunks() -> Any:
            sent = 0
            with open(bundle, "rb") as f:
                while True:
                    data = f.read(UPLOAD_CHUNK)
                    if not data:
                        break
                    sent += len(data)
                    if job is not None:
                        job.set_progress(100.0 * sent / max(size, 1))
                        job.check_cancelled()
                    yield data

        return self._request("POST", "/agent/bundles", content=chunks(), timeout=None,
                             headers={"Content-Length": str(size), "Content-Type": "application/x-tar"})


def deploy_bundle(bundle: Path | str, agent: str, token: str, job: JobState | None = None,
                  verify: bool | str = True) -> DeployReport:
    """Upload ``bundle``; the agent verifies, warms up and activates it (its old version serves meanwhile)."""
    job = job or JobState(name="deploy")
    client = AgentClient(agent, token, verify=verify)
    t0 = time.perf_counter()
    job.set_status(f"uploading {Path(bundle).name} to {client.url}")
    res = client.upload(bundle, job)
    t1 = time.perf_counter()
    job.set_status(f"{res['name']} {res['version']} active on {client.url}")
    return DeployReport(agent=client.url, bundle=str(bundle), name=res["name"], version=res["version"],
                        previous=res.get("previous"), warmup_ms=float(res.get("warmup_ms", 0.0)),
                        upload_bytes=os.path.getsize(bundle), upload_s=round(t1 - t0, 3),
                        total_s=round(time.perf_counter() - t0, 3), served_models=res.get("served_models", []),
                        openssf=res.get("openssf"))

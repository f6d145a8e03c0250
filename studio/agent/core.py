"""The agent's logic without HTTP: install (verify -> stage -> load -> warm up -> activate), rollback, resume.

Activation swaps one dict reference, so requests in flight finish on the old session while new requests
see the new version; the old version keeps serving until the new one has answered its warm-up request.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studio.agent.disk_space import from_os_error, is_no_space, room, storage_errors
from studio.agent.runtime import Deployment, ServedModel, load_deployment, warmup_deployment
from studio.agent.statistics import StatisticsRegistry
from studio.agent.store import BundleStore
from studio.agent.trust import PushedKey, TrustStore
from studio.core.errors import BundleError, InputError, StudioError
from studio.edge.manifest import Manifest
from studio.edge.trust import TrustedKeys
from studio.edge.verify import extract_verified
from studio.package.boards import board_accepts  # the board registry, the agent's one studio.package use

log = logging.getLogger("studio.agent")
RETIRE_AFTER_S = 30.0  # a replaced version's runtime (e.g. the rknn simulator process) stops this long after


def unknown_model(name: str) -> str:
    """Triton's words for a model it does not serve (HTTP 404, gRPC NOT_FOUND)."""
    return f"Request for unknown model: '{name}' is not found"


def _warm_or_close(dep: Deployment) -> float:
    """Warm ``dep`` up; one that cannot answer is closed before the error goes on (nothing left running)."""
    try:
        return warmup_deployment(dep)
    except BaseException:
        dep.close()
        raise


@dataclass
class AgentConfig:
    data: Path
    trusted: TrustedKeys
    token: str
    board: str = "any"
    max_upload_bytes: int = 32 << 30  # the disk's free space is checked on top (disk_space.check_upload)
    keep_versions: int = 5
    threads: int = 0
    name: str = "studio-agent"
    allow_trust_push: bool = False  # accept signing keys over POST /agent/trust (see studio.agent.trust)
    openssf: Any = None  # an edge.openssf.OpenSSFTrust: bundles must carry an OpenSSF signature of model/ it verifies
    extra: dict[str, Any] = field(default_factory=dict)


class Conflict(StudioError, kind="conflict"):
    """The request clashes with what is installed (HTTP 409)."""


class AgentCore:
    def __init__(self, config: AgentConfig) -> None:
        self.config = config
        self.store = BundleStore(config.data)
        self.deployments: dict[str, Deployment] = {}
        self.served: dict[str, ServedModel] = {}  # replaced as a whole on every change (atomic swap)
        self._install_lock = threading.Lock()
        self.started = time.time()
        self.events: dict[str, int] = {"installed": 0, "rejected": 0, "rollback": 0, "warmup_failed": 0,
                                       "no_space": 0}
        self.statistics = StatisticsRegistry()  # Triton statistics per served model version (HTTP and gRPC)
        self.trust = TrustStore(config.data, config.trusted, allow_push=config.allow_trust_push)

    # -- start-up --------------------------------------------------------------------------------------
    def start(self) -> None:
        pushed = self.trust.load()  # before resuming: versions signed by a pushed key must verify
        if pushed:
            log.info("trusting %d key(s) pushed earlier: %s", len(pushed), ", ".join(pushed))
        removed = self.store.clean_incoming()
        if removed:
            log.warning("removed %d interrupted upload(s): %s", len(removed), ", ".join(removed))
        for name in list(self.store.state["models"]):
            st = self.store.model_state(name)
            candidates = [st.get("active")] + list(reversed(st.get("stack", [])))
            for v in [c for c in candidates if c]:
                try:
                    dep = load_deployment(self.store.version_dir(name, v), self.config.trusted,
                                          threads=self.config.threads, board=self.config.board)
                    _warm_or_close(dep)
                except StudioError as exc:
                    log.error("cannot resume %s %s: %s", name, v, exc.message)
                    self.store.record(name, "resume-failed", v, error=exc.message)
                    continue
                self._activate(dep)
                if v != st.get("active"):
                    st["active"] = v
                    self.store.record(name, "resumed-fallback", v)
                log.info("resumed %s version %s", name, v)
                break
        self.store.save_state()

    # -- activation ------------------------------------------------------------------------------------
    def _activate(self, dep: Deployment) -> Deployment | None:
        old = self.deployments.get(dep.name)
        deployments = dict(self.deployments)
        deployments[dep.name] = dep
        served = {}
        for d in deployments.values():
            served.update(d.models)
        self.deployments = deployments
        self.served = served
        return old

    def install_upload(self, upload: Path) -> dict[str, Any]:
        """Verify the uploaded tar, install, load, warm up and activate it; the old version serves throughout."""
        with self._install_lock:
            staging = self.store.new_staging_dir()
            try:
                manifest = self._extract(upload, staging)
                if not board_accepts(self.config.board, manifest.board):
                    self.events["rejected"] += 1
                    raise InputError(f"bundle is built for board {manifest.board}, this agent runs on "
                                     f"{self.config.board}", offending=manifest.board,
                                     hint=f"package it again with --board {self.config.board}")
                name, version = manifest.name, manifest.version
                openssf = self._check_openssf(staging) if self.config.openssf else None
                if self.store.has_version(name, version):
                    raise Conflict(f"{name} version {version} is already installed on this agent",
                                   offending=f"{name}:{version}",
                                   hint="package with a new --version, or use `studio agent rollback "
                                        f"--model {name} --version {version}` to reactivate it")
                with storage_errors(self.store.root, "installing the bundle"):
                    vdir = self.store.install(staging, name, version)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            result = self._load_and_activate(name, version, vdir, event="activated", fresh=True)
            return {**result, "openssf": openssf} if openssf else result

    def _check_openssf(self, staging: Path) -> dict[str, Any]:
        """`--require-openssf`: the bundle's model/ must verify against its model.sig and the configured trust."""
        from studio.edge.openssf import BUNDLE_MODEL_DIR, SIGNATURE_FILE, verify_folder

        try:
            if not (staging / SIGNATURE_FILE).is_file():
                raise BundleError(f"the bundle carries no OpenSSF signature ({SIGNATURE_FILE}) and this agent "
                                  "requires one (--require-openssf)", offending=SIGNATURE_FILE,
                                  hint="package it with `studio package ... --openssf-key KEY.pem` (the key whose "
                                       "public half the agent was started with)")
            check = verify_folder(staging / BUNDLE_MODEL_DIR, self.config.openssf, staging / SIGNATURE_FILE)
        except StudioError as exc:  # name the bundle's files, not the agent's staging folder
            self.events["rejected"] += 1
            where = f"{staging}/"
            exc.message = exc.message.replace(where, "bundle:").replace(str(staging), "bundle")
            exc.offending = (exc.offending or "").replace(where, "")
            raise
        log.info("OpenSSF signature of model/ verified: %s (%s)", check.signer, check.trusted_by)
        return {"signer": check.signer, "method": check.method, "files": check.files}

    def _extract(self, upload: Path, staging: Path) -> Manifest:
        """Verify and extract ``upload`` into ``staging`` and delete it; a full disk is a StorageError raised
        once the partial copy and the upload are gone (its free space is then the truth)."""
        try:
            return extract_verified(upload, staging, self.config.trusted)
        except StudioError:
            self.events["rejected"] += 1
            raise
        except OSError as exc:
            if not is_no_space(exc):
                raise
            failed = exc
        finally:
            upload.unlink(missing_ok=True)
        self.events["no_space"] += 1
        raise from_os_error(failed, self.store.root, "extracting the bundle")

    def _load_and_activate(self, name: str, version: str, vdir: Path, *, event: str,
                           fresh: bool) -> dict[str, Any]:
        st = self.store.model_state(name)
        previous = st.get("active")
        try:
            with storage_errors(self.store.root, f"loading {name} {version}"):  # runtimes may copy files
                dep = load_deployment(vdir, self.config.trusted, threads=self.config.threads,
                                      board=self.config.board)
                warm = _warm_or_close(dep)
        except StudioError as exc:
            self.events["warmup_failed"] += 1
            self.store.record(name, "warmup-failed" if fresh else "rollback-failed", version, error=exc.message)
            if fresh:
                self.store.remove_version(name, version)
            self.store.save_state()
            exc.details = {**exc.details, "rolled_back_to": previous}
            exc.hint = (exc.hint or "") + (f"; version {previous} is still serving" if previous else "")
            raise
        if fresh:  # a version number reused after pruning is a new bundle: its statistics start at zero
            self.statistics.forget(dep.models, version)
        replaced = self._activate(dep)
        if replaced is not None:  # requests already running on it finish first; then its runtime stops
            retire = threading.Timer(RETIRE_AFTER_S, replaced.close)
            retire.daemon = True
            retire.start()
        if previous and previous != version:
            st["stack"] = [v for v in st["stack"] if v != previous] + [previous]
        st["stack"] = [v for v in st["stack"] if v != version]
        st["active"] = version
        self.store.record(name, event, version, previous=previous, warmup_ms=round(warm * 1000, 3))
        pruned = self.store.prune(name, self.config.keep_versions)
        self.store.save_state()
        self.events["installed" if fresh else "rollback"] += 1
        log.info("%s %s version %s (previous %s)", event, name, version, previous)
        return {"name": name, "version": version, "previous": previous, "event": event,
                "warmup_ms": round(warm * 1000, 3), "served_models": sorted(dep.models), "pruned": pruned}

    def rollback(self, name: str, version: str | None = None) -> dict[str, Any]:
        """Reactivate ``version`` or the previously active one; the current one serves until it is ready."""
        with self._install_lock:
            st = self.store.state["models"].get(name)
            if st is None:
                raise InputError(f"no model named '{name}' on this agent", offending=name,
                                 hint=f"models here: {', '.join(self.store.names()) or 'none'}")
            saved_stack = list(st.get("stack", []))
            if version is None:
                stack = [v for v in st.get("stack", []) if self.store.has_version(name, v)]
                if not stack:
                    raise Conflict(f"{name} has no earlier version to roll back to", offending=name,
                                   hint="deploy another version first")
                version = stack[-1]
                st["stack"] = stack[:-1]
            elif not self.store.has_version(name, version):
                raise InputError(f"{name} has no version {version} on this agent", offending=version,
                                 hint=f"versions here: {', '.join(self.store.versions(name)) or 'none'}")
            if version == st.get("active"):
                raise Conflict(f"{name} version {version} is already active", offending=version,
                               hint="name another version")
            current = st.get("active")
            try:
                result = self._load_and_activate(name, version, self.store.version_dir(name, version),
                                                 event="rollback", fresh=False)
            except StudioError:
                st["stack"] = saved_stack
                self.store.save_state()
                raise
            # a rollback does not make the version we left the next rollback target
            st["stack"] = [v for v in st["stack"] if v != current]
            self.store.save_state()
            return result

    # -- status ----------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        models = {}
        for name in self.store.names():
            st = self.store.model_state(name)
            dep = self.deployments.get(name)
            versions = []
            for v in self.store.versions(name):
                vdir = self.store.version_dir(name, v)
                try:
                    m = json.loads((vdir / "manifest.json").read_text())
                    versions.append({"version": v, "board": m.get("board"), "created": m.get("created"),
                                     "signer_key_id": m.get("signer_key_id"), "forced": m.get("forced", False),
                                     "size": sum(f["size"] for f in m.get("files", [])),
                                     "active": v == st.get("active")})
                except (OSError, ValueError):
                    versions.append({"version": v, "active": v == st.get("active"), "error": "unreadable"})
            models[name] = {"active": st.get("active"), "rollback_to": (st.get("stack") or [None])[-1],
                            "versions": versions, "history": st.get("history", [])[-20:],
                            "served_models": sorted(dep.models) if dep else [],
                            "providers": sorted({p for m in dep.models.values() for p in m.providers})
                            if dep else []}
        return {"name": self.config.name, "board": self.config.board, "uptime_s": round(time.time() - self.started, 1),
                "models": models, "events": dict(self.events),
                "trusted_keys": self.config.trusted.ids(),
                "pushed_keys": self.trust.pushed_ids(), "trust_push": self.trust.allow_push,
                "max_upload_bytes": self.config.max_upload_bytes, "storage": room(self.store.root).to_dict()}

    def push_trust(self, text: str) -> PushedKey:
        """Trust a signing key sent by a studio (refused unless started with --allow-trust-push)."""
        with self._install_lock:  # never while a bundle is being verified
            pushed = self.trust.push(text)
        log.info("%s signing key %s (%s) over the management API", "trusting" if pushed.new else "already trusted",
                 pushed.key_id, pushed.label)
        return pushed

    def model(self, name: str) -> ServedModel:
        m = self.served.get(name)
        if m is None:
            raise KeyError(name)
        return m

    def find(self, name: str, version: str | None = None) -> ServedModel | None:
        """The served model ``name``, at ``version`` when one is named (None or "": whichever is served); None
        when it is not served."""
        m = self.served.get(name)
        if m is None or (version not in (None, "") and version != m.version):
            return None
        return m

"""A full disk during upload, on a real agent process, while 64 client threads keep inferring.

Two real ways to run out of room, each giving the agent's write path a real OS error:

- ``tmpfs``: the data folder on a 24 MiB tmpfs that a ballast file fills to 4 MiB free (ENOSPC). Needs
  ``mount``, so it is skipped, with the reason, where mounting is refused (an unprivileged CI runner);
- ``fsize``: the agent runs with a 4 MiB RLIMIT_FSIZE (``ulimit -f``), so writing a bigger file fails with
  EFBIG. It runs anywhere.

An 8 MiB v2 bundle is then uploaded three ways: with its Content-Length (refused before a byte is written),
chunked with no length (the write fails mid-way) and gzipped (a tiny upload whose extraction fills the disk).
Each gets a clean 507 JSON error naming the data folder, the data folder is byte-for-byte what it was, v1 keeps
answering every client, and once the room is freed (ballast deleted, limit raised) the same upload succeeds.
"""

from __future__ import annotations

import gzip
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from studio.core.errors import StorageError
from studio.package.bundle import build_bundle
from studio.package.client import AgentClient, deploy_bundle
from tests.edge.helpers import AgentProcess, make_mlp, tree_snapshot
from tests.edge.infer_load import CLIENTS, Load, wait_more

pytestmark = pytest.mark.timeout(120)
MIB = 1 << 20
DISK = 24 * MIB  # the tmpfs
ROOM = 4 * MIB  # what is left once the disk is "full": less than the bundle
PAD = 8 * MIB  # v2's unused zero initializer: an 8 MiB bundle that gzips to a few KiB


@dataclass
class FullDisk:
    kind: str
    agent: AgentProcess
    fill: Callable[[], None]  # leave ROOM bytes
    free: Callable[[], None]  # make room again


def _mount_tmpfs(mnt: Path, size: int) -> str | None:
    """None once mounted, else why it could not be."""
    if os.geteuid() != 0:
        return "not root"
    if shutil.which("mount") is None:
        return "no mount command"
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True,
                       text=True)
    return None if p.returncode == 0 else (p.stderr.strip() or f"mount exited {p.returncode}")


def _tmpfs(tmp_path: Path, trust_file: Path, token_file: Path) -> Iterator[FullDisk]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    why = _mount_tmpfs(mnt, DISK)
    if why:
        pytest.skip(f"cannot mount a tmpfs here ({why}); the fsize case runs the same faults with EFBIG")
    ballast = mnt / "ballast"  # other files on the board's disk, outside the agent's data folder

    def fill() -> None:
        with open(ballast, "wb") as f:
            f.write(b"\1" * (shutil.disk_usage(mnt).free - ROOM))

    agent = AgentProcess(mnt / "data", trust_file, token_file, log=tmp_path / "agent.log")
    try:
        yield FullDisk("tmpfs", agent.start(), fill, lambda: ballast.unlink())
    finally:
        agent.stop()
        subprocess.run(["umount", str(mnt)], check=False)


def _fsize(tmp_path: Path, trust_file: Path, token_file: Path) -> Iterator[FullDisk]:
    _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def limit() -> None:  # in the agent's process, before it starts; Python ignores SIGXFSZ, writes get EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (ROOM, hard))

    agent = AgentProcess(tmp_path / "data", trust_file, token_file, preexec=limit)
    try:
        yield FullDisk("fsize", agent.start(), lambda: None,
                       lambda: resource.prlimit(agent.proc.pid, resource.RLIMIT_FSIZE, (hard, hard)))  # type: ignore[union-attr]
    finally:
        agent.stop()


@pytest.fixture(params=["tmpfs", "fsize"])
def full_disk(request: pytest.FixtureRequest, tmp_path: Path, trust_file: Path,
              token_file: Path) -> Iterator[FullDisk]:
    yield from (_tmpfs if request.param == "tmpfs" else _fsize)(tmp_path, trust_file, token_file)


def _refused(status: int, body: dict, data: Path) -> str:
    assert status == 507, (status, body)
    assert body["kind"] == "storage" and str(data) in body["error"] and body["offending"] == str(data), body
    return body["error"]


def _intact(agent: AgentProcess, token: str, before: dict) -> None:
    assert tree_snapshot(agent.data) == before  # no partial upload, no half-extracted version, state untouched
    st = AgentClient(agent.url, token).status()["models"]["tiny"]
    assert st["active"] == "1" and [v["version"] for v in st["versions"]] == ["1"]


def test_full_disk_during_upload_under_64_clients(full_disk: FullDisk, signing_key, token_file: Path,  # type: ignore[no-untyped-def]
                                                  tmp_path: Path) -> None:
    agent, token = full_disk.agent, token_file.read_text().strip()
    v1 = build_bundle(make_mlp(tmp_path / "src1" / "tiny.onnx"), "generic-x86_64", signing_key,
                      tmp_path / "tiny-1.tar", version="1").bundle
    v2 = Path(build_bundle(make_mlp(tmp_path / "src2" / "tiny.onnx", scale=3.0, pad_bytes=PAD, zero_pad=True),
                           "generic-x86_64", signing_key, tmp_path / "tiny-2.tar", version="2").bundle)
    v2_gz = tmp_path / "tiny-2.tar.gz"
    v2_gz.write_bytes(gzip.compress(v2.read_bytes()))
    deploy_bundle(v1, agent.url, token)
    full_disk.fill()
    before = tree_snapshot(agent.data)
    errors: list[str] = []
    with Load(agent.url) as load:
        wait_more(load, "1")
        served0, t0 = load.snapshot(), time.perf_counter()

        # 1. declared Content-Length: refused before a byte is written; the CLI says so in one clean message
        cli = subprocess.run([sys.executable, "-m", "studio.cli.main", "deploy", str(v2), "--agent", agent.url,
                              "--token-file", str(token_file)], capture_output=True, text=True, timeout=60)
        assert cli.returncode != 0 and "Traceback" not in cli.stderr, cli.stderr
        assert f"agent {agent.url} cannot store the bundle" in cli.stderr and str(agent.data) in cli.stderr
        assert ("MB free" if full_disk.kind == "tmpfs" else "file-size limit") in cli.stderr, cli.stderr
        errors.append(cli.stderr[cli.stderr.index("error: "):].strip())
        _intact(agent, token, before)
        wait_more(load, "1")

        # 2. chunked, no length: the write into DATA/incoming fails mid-way (ENOSPC / EFBIG)
        def chunks() -> Iterator[bytes]:
            data = v2.read_bytes()
            for i in range(0, len(data), 256 << 10):
                yield data[i:i + (256 << 10)]

        r = httpx.post(agent.url + "/agent/bundles", content=chunks(), timeout=60,
                       headers={"Authorization": f"Bearer {token}"})
        errors.append(_refused(r.status_code, r.json(), agent.data))
        assert "while receiving the upload" in r.json()["error"]
        _intact(agent, token, before)
        wait_more(load, "1")

        # 3. gzipped: passes the check (a few KiB), then extraction fills the disk
        with pytest.raises(StorageError) as exc:
            deploy_bundle(v2_gz, agent.url, token)
        assert exc.value.details["status"] == 507 and "while extracting the bundle" in exc.value.message
        errors.append(exc.value.message)
        _intact(agent, token, before)
        wait_more(load, "1")
        served1, t1 = load.snapshot(), time.perf_counter()

        # room again: the same upload goes through, v2 takes over with no client seeing an error
        full_disk.free()
        t2 = time.perf_counter()
        assert deploy_bundle(v2, agent.url, token).version == "2"
        t3 = time.perf_counter()
        wait_more(load, "2")
    assert load.bad == [] and load.refused == 0, (load.bad[:5], load.refused)
    st = AgentClient(agent.url, token).status()
    assert st["models"]["tiny"]["active"] == "2" and st["events"]["no_space"] == 3
    assert not list((agent.data / "incoming").iterdir())
    during = served1[0] - served0[0]
    assert during > 0
    print(f"\nfull disk ({full_disk.kind}) under {CLIENTS} clients: {during} v1 answers in {t1 - t0:.1f} s while 3 "
          f"uploads of an {v2.stat().st_size / 1e6:.1f} MB bundle got 507, wrong answers {len(load.bad)}, refused "
          f"{load.refused}; after freeing, the same upload active in {t3 - t2:.2f} s, v2 answers {load.ok['2']}")
    for e in errors:
        print(f"  507: {e}")

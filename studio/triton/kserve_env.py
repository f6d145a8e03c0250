"""The `kserve` client's own environment: a venv outside the clone, created on first use, never the studio's venv.

kserve 0.21 pins psutil<6 (the studio pins psutil 7), so ``pip install kserve`` into the studio's venv would
downgrade it. The pinned list below (``pip freeze`` of a clean ``pip install kserve==0.21.0``) goes with
``--no-deps`` into ``CACHE/kserve-0.21.0/venv`` (``STUDIO_KSERVE_ENV`` overrides it), the way the rknn plugin
builds its toolkit env; only ``kserve_worker.py`` runs there, in a subprocess.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from studio.core.errors import InstallError

KSERVE_VERSION = "0.21.0"
ENV_VAR = "STUDIO_KSERVE_ENV"
STAMP = "studio-kserve-env.json"
REQUIREMENTS = """\
aiohappyeyeballs==2.7.1 aiohttp==3.14.5 aiohttp-retry==2.9.1 aiosignal==1.4.0 annotated-doc==0.0.7
annotated-types==0.8.0 anyio==4.16.0 attrs==26.1.0 certifi==2026.10.19.post1 cffi==2.1.1 charset-normalizer==3.5.3
click==8.5.1 cloudevents==1.13.0 cryptography==50.0.2 deprecation==2.1.0 durationpy==0.11 fastapi==0.165.0
frozenlist==1.8.0 grpc-interceptor==0.15.4 grpcio==1.85.3 grpcio-tools==1.81.1 h11==0.16.0 httpcore==1.0.9
httptools==0.9.0 httpx==0.28.1 idna==3.20 kserve==0.21.0 kubernetes==37.0.1 multidict==7.2.1 numpy==2.4.6
oauthlib==4.0.1 opentelemetry-api==1.45.2 orjson==3.13.0 packaging==26.4 pandas==2.3.3 pillow==13.0.0
prometheus_client==0.26.0 propcache==0.5.4 protobuf==6.33.6 psutil==5.9.8 pyasn1==0.6.5 pycparser==3.12
pydantic==2.14.4 pydantic_core==2.50.5 PyJWT==2.15.1 python-dateutil==2.9.0.post0 python-dotenv==1.2.4
python-multipart==0.0.34 pytz==2026.6 PyYAML==6.0.4 requests==2.34.2 requests-oauthlib==2.0.0 six==1.17.0
starlette==1.10.0 tabulate==0.10.0 timing-asgi==0.3.2 typing-inspection==0.4.5 typing_extensions==4.16.0
tzdata==2026.6 urllib3==2.8.0 uvicorn==0.54.0 uvloop==0.23.0 watchfiles==1.3.0 websocket-client==1.9.2
websockets==17.4 yarl==1.25.1
"""


def requirements() -> list[str]:
    return REQUIREMENTS.split()


def env_dir() -> Path:
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser()
    from studio.core.paths import cache_dir

    return cache_dir() / f"kserve-{KSERVE_VERSION}" / "venv"


def env_python(env: Path | None = None) -> Path:
    return (env or env_dir()) / "bin" / "python"


def worker_path() -> Path:
    return Path(__file__).with_name("kserve_worker.py")


def _hash() -> str:
    return hashlib.sha256(" ".join(requirements()).encode()).hexdigest()[:16]


def env_ready(env: Path | None = None) -> bool:
    """Cheap: the stamp written after a good creation, for this pinned list."""
    stamp = (env or env_dir()) / STAMP
    try:
        return json.loads(stamp.read_text(encoding="utf-8")).get("requirements") == _hash() \
            and env_python(env).exists()
    except (OSError, ValueError):
        return False


def clean_env() -> dict[str, str]:
    """Nothing of the studio's venv leaks into the worker."""
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONSAFEPATH")}


def run_worker(request: dict[str, Any], *, env: Path | None = None, timeout: float = 180) -> dict[str, Any]:
    """One JSON request to ``kserve_worker.py`` under the environment's python; its JSON answer."""
    proc = subprocess.run([str(env_python(env)), "-I", str(worker_path())], input=json.dumps(request),
                          capture_output=True, text=True, timeout=timeout, env=clean_env())
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        raise InstallError(f"the kserve validation worker answered nothing (exit {proc.returncode}): "
                           f"{(proc.stderr or proc.stdout).strip()[-400:]}", offending=str(env or env_dir()),
                           hint=f"remove {env or env_dir()} so it is created again")
    return json.loads(lines[-1])


@contextlib.contextmanager
def _lock(env: Path) -> Iterator[None]:
    import fcntl

    env.parent.mkdir(parents=True, exist_ok=True)
    with open(env.parent / (env.name + ".lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_env(say: Any = None, *, env: Path | None = None) -> Path:
    """The environment's folder, created first when missing (about 450 MB; a minute from a local index)."""
    env = env or env_dir()
    if env_ready(env):
        return env
    say = say or (lambda _text: None)
    with _lock(env):
        if env_ready(env):
            return env
        t0 = time.perf_counter()
        if env.exists():
            shutil.rmtree(env)
        say(f"creating the kserve {KSERVE_VERSION} validation environment at {env}")
        base = getattr(sys, "_base_executable", None) or sys.executable
        try:
            subprocess.run([base, "-m", "venv", str(env)], check=True, capture_output=True, env=clean_env())
            proc = subprocess.run([str(env_python(env)), "-m", "pip", "install", "--no-deps", "--no-input",
                                   "--progress-bar", "off", *requirements()], capture_output=True, text=True,
                                  env=clean_env())
        except (OSError, subprocess.SubprocessError) as exc:
            raise InstallError(f"could not create the kserve environment at {env}: {exc}", offending=str(env),
                               hint="pip install 'deployment-studio[cluster]' kserve==0.21.0 in its own venv "
                                    f"and point {ENV_VAR} at it") from exc
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-8:])
            raise InstallError(f"pip could not install kserve {KSERVE_VERSION} into {env}:\n{tail}",
                               offending=str(env), hint=f"check the package index, or set {ENV_VAR} to a venv "
                                                        f"holding kserve=={KSERVE_VERSION}")
        resp = run_worker({"action": "version"}, env=env)
        if not resp.get("ok"):
            raise InstallError(f"the new kserve environment does not import kserve: {resp.get('error')}",
                               offending=str(env))
        stamp = {"requirements": _hash(), "versions": resp["result"]["versions"],
                 "seconds": round(time.perf_counter() - t0, 1), "created": time.strftime("%Y-%m-%dT%H:%M:%S")}
        (env / STAMP).write_text(json.dumps(stamp, indent=1), encoding="utf-8")
        say(f"kserve environment ready in {stamp['seconds']} s")
    return env

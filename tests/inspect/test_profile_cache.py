"""The computed ONNX Runtime profile is cached per user and build, and never trusted when stale or broken."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SNIPPET = """
import json, sys, time
t = time.perf_counter()
from studio.inspect.ort_profile import ort_cpu_profile
p = ort_cpu_profile()
print(json.dumps({"s": time.perf_counter() - t, "ops": p.op_count(), "ort": "onnxruntime" in sys.modules,
                  "version": p.version}))
"""


def _run(cache: Path, **env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", SNIPPET], capture_output=True, text=True, check=True,
                         env={**os.environ, "STUDIO_CACHE_DIR": str(cache), **env})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cache_written_then_read_without_importing_onnxruntime(tmp_path: Path) -> None:
    first = _run(tmp_path)
    files = list((tmp_path / "inspect").glob("ort-cpu-*.pickle"))
    assert first["ort"] and len(files) == 1  # computed from the installed onnxruntime's registry
    second = _run(tmp_path)
    assert not second["ort"], "the cached profile must not need onnxruntime imported"
    assert (second["ops"], second["version"]) == (first["ops"], first["version"])


def test_corrupt_entry_is_recomputed_and_no_cache_writes_nothing(tmp_path: Path) -> None:
    _run(tmp_path)
    (entry,) = (tmp_path / "inspect").glob("ort-cpu-*.pickle")
    entry.write_bytes(b"not a pickle")
    again = _run(tmp_path)
    assert again["ort"] and again["ops"] > 100  # recomputed, not broken
    assert entry.read_bytes()[:1] == b"\x80"  # and written back whole
    other = tmp_path / "other"
    off = _run(other, STUDIO_NO_CACHE="1")
    assert off["ort"] and not other.exists()


def test_key_follows_the_builds(tmp_path: Path) -> None:
    from studio.inspect.profile_cache import build_key

    a = build_key(("onnxruntime", "onnx"))
    assert a is not None and a == build_key(("onnxruntime", "onnx"))
    assert build_key(("no_such_package_here",)) is None  # nothing cached when a build cannot be found
    mod = tmp_path / "mod.py"
    mod.write_text("x = 1\n")
    k1 = build_key(("onnx",), str(mod))
    os.utime(mod, ns=(1, 1))
    assert build_key(("onnx",), str(mod)) != k1  # a changed module is a new key


LIST = """
import json, sys
from pathlib import Path
from studio.inspect.profiles import list_targets
p = next(p for p in list_targets([Path(sys.argv[1])]) if p.id == "my-npu")
print(json.dumps({"name": p.name, "yaml": "yaml" in sys.modules}))
"""


def test_an_edited_profile_file_is_read_again(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "studio" / "resources" / "targets" / "hailo-8.yaml"
    folder = tmp_path / "targets"
    folder.mkdir()
    prof = folder / "my-npu.yaml"
    prof.write_text(src.read_text().replace("id: hailo-8", "id: my-npu").replace("name: ", "name: First ", 1))
    env = {**os.environ, "STUDIO_CACHE_DIR": str(tmp_path / "cache")}

    def listed() -> dict:
        out = subprocess.run([sys.executable, "-c", LIST, str(folder)], capture_output=True, text=True, check=True,
                             env=env)
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = listed()
    assert first["name"].startswith("First ") and first["yaml"]
    again = listed()
    assert again["name"] == first["name"] and not again["yaml"]  # from the cache, no YAML parsing
    prof.write_text(prof.read_text().replace("name: First ", "name: Second "))
    assert listed()["name"].startswith("Second ")  # the edit is seen at once

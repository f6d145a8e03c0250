"""`--model DIR|HUB_ID` for `studio export` / `multimodal-export`: hub ids come from the local HF cache only.

The cache here is a temporary folder in huggingface_hub's layout (models--ORG--NAME/blobs, snapshots/<commit>
symlinks, refs/main) holding the real tiny-clip sample; nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from studio.cli.main import main as studio_main
from studio.core.errors import InputError
from studio.export.model_source import cache_folder, hf_hub_cache, is_hub_id, resolve_hub_id, resolve_model

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SIGNATURE = "text:input_ids,text:attention_mask,vision:pixel_values"


def _console_script(name: str) -> Path:
    script = Path(sys.executable).with_name(name)
    if not script.is_file():
        pytest.skip(f"console script {name} is not installed next to {sys.executable}")
    return script


def _place_in_cache(src: Path, cache: Path, repo_id: str, commit: str = COMMIT, refs: bool = True) -> Path:
    """Lay ``src`` out as huggingface_hub does: blobs by hash, snapshot symlinks, refs/main."""
    folder = cache / ("models--" + repo_id.replace("/", "--"))
    snap = folder / "snapshots" / commit
    (folder / "blobs").mkdir(parents=True, exist_ok=True)
    snap.mkdir(parents=True)
    for f in sorted(src.rglob("*")):
        if f.is_file():
            digest = hashlib.sha256(f.read_bytes()).hexdigest()
            blob = folder / "blobs" / digest
            if not blob.exists():
                shutil.copy2(f, blob)
            link = snap / f.relative_to(src)
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(os.path.relpath(blob, link.parent))
    if refs:
        (folder / "refs").mkdir()
        (folder / "refs" / "main").write_text(commit, encoding="utf-8")
    return snap


def _fake_model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "clip"}', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"0")
    return folder


@pytest.fixture
def no_hf_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


# ----------------------------------------------------------------------------------------- resolution (no torch)

@pytest.mark.parametrize("text", ["Qwen/Qwen2-VL-2B-Instruct", "gpt2", "org/name.v1", "a_b/c-d"])
def test_valid_hub_ids(text: str) -> None:
    assert is_hub_id(text)


@pytest.mark.parametrize("text", ["./nope", "a/b/c", "/abs/path", "", "org/", "-org/x", "org--x/y", "a/b..c",
                                  "x" * 97, "org/name.onnx/", "~/models"])
def test_invalid_hub_ids(text: str) -> None:
    assert not is_hub_id(text)


def test_cache_location_follows_the_environment(no_hf_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    no_hf_env.setenv("HOME", str(tmp_path / "home"))
    assert hf_hub_cache() == tmp_path / "home" / ".cache" / "huggingface" / "hub"
    no_hf_env.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hf_hub_cache() == tmp_path / "xdg" / "huggingface" / "hub"
    no_hf_env.setenv("HF_HOME", str(tmp_path / "hfhome"))
    assert hf_hub_cache() == tmp_path / "hfhome" / "hub"
    no_hf_env.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hf_hub_cache() == tmp_path / "hub"
    assert cache_folder("Qwen/Qwen2-VL-2B-Instruct") == tmp_path / "hub" / "models--Qwen--Qwen2-VL-2B-Instruct"


def test_hub_id_resolves_through_refs_main(no_hf_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = _fake_model(tmp_path / "src")
    no_hf_env.setenv("HF_HOME", str(tmp_path / "hfhome"))
    snap = _place_in_cache(src, tmp_path / "hfhome" / "hub", "org/name")
    assert resolve_model("org/name") == snap
    assert (resolve_model("org/name") / "config.json").read_text(encoding="utf-8") == '{"model_type": "clip"}'
    # a second, older snapshot does not confuse it: refs/main decides
    _place_in_cache(src, tmp_path / "other", "org/name", commit="f" * 40)
    assert resolve_hub_id("org/name", cache=tmp_path / "other") == tmp_path / "other" / "models--org--name" \
        / "snapshots" / ("f" * 40)


def test_snapshot_copied_without_refs_is_used_when_it_is_the_only_one(no_hf_env: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    no_hf_env.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snap = _place_in_cache(_fake_model(tmp_path / "src"), tmp_path / "hub", "gpt2", refs=False)
    assert resolve_model("gpt2") == snap


def test_missing_hub_id_names_the_cache_and_how_to_fill_it(no_hf_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    no_hf_env.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(InputError) as ei:
        resolve_model("Qwen/Qwen2-VL-2B-Instruct")
    text = ei.value.render()
    assert str(tmp_path / "hub") in text and "models--Qwen--Qwen2-VL-2B-Instruct" in text
    assert "hf download Qwen/Qwen2-VL-2B-Instruct" in text and "huggingface-cli download" in text
    assert "never downloads" in text and ei.value.exit_code == 2


def test_incomplete_snapshot_is_an_input_error(no_hf_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    no_hf_env.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    snap = tmp_path / "hub" / "models--org--name" / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    with pytest.raises(InputError, match="no config.json") as ei:
        resolve_model("org/name")
    assert ei.value.offending == str(snap)


def test_local_folder_wins_and_files_or_bad_names_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    local = _fake_model(tmp_path / "org" / "name")
    assert resolve_model("org/name") == Path("org/name") and local.is_dir()  # a folder, not the hub id
    (tmp_path / "model.onnx").write_bytes(b"x")
    with pytest.raises(InputError, match="is a file"):
        resolve_model("model.onnx")
    for bad in ("./nope", "a/b/c"):
        with pytest.raises(InputError, match="neither an existing folder nor a hub model id") as ei:
            resolve_model(bad)
        assert ei.value.offending == bad


def test_model_dir_and_model_are_exclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "m.onnx"
    assert studio_main(["export", str(tmp_path), "--model", str(tmp_path), "--output", str(out)]) == 2
    assert "both MODEL_DIR" in capsys.readouterr().err
    assert studio_main(["export", "--output", str(out)]) == 2
    assert "no model given" in capsys.readouterr().err
    assert not out.parent.exists()


# ----------------------------------------------------------------------------------------- the console script

@pytest.fixture(scope="module")
def hf_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from studio.export.api import write_sample

    root = tmp_path_factory.mktemp("hf")
    src = write_sample("tiny-clip", root / "staging" / "tiny-clip")
    _place_in_cache(src, root / "hub", "studio-test/tiny-clip")
    return root / "hub"


def _run(args: list[str], cache: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HOME", "HUGGINGFACE_HUB_CACHE")}
    env.update(HF_HUB_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


@pytest.mark.export
def test_multimodal_export_takes_a_hub_id_from_the_cache(hf_cache: Path, tmp_path: Path) -> None:
    out = tmp_path / "out" / "X.onnx"
    proc = _run([str(_console_script("multimodal-export")), "--model", "studio-test/tiny-clip",
                 "--input-signature", SIGNATURE, "--output", str(out), "--quiet"], hf_cache, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.is_file() and "export succeeded" in proc.stdout
    assert "models--studio-test--tiny-clip" in proc.stdout  # the summary names the resolved snapshot


@pytest.mark.export
def test_studio_export_takes_a_local_folder_through_model(hf_cache: Path, tmp_path: Path) -> None:
    snap = resolve_hub_id("studio-test/tiny-clip", cache=hf_cache)
    out = tmp_path / "local" / "m.onnx"
    proc = _run([str(_console_script("studio")), "export", "--model", str(snap), "--output", str(out), "--quiet",
                 "--cases", "2"], hf_cache, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert out.is_file()


@pytest.mark.parametrize("model, needle", [("studio-test/not-there", "models--studio-test--not-there"),
                                           ("./nope", "./nope"), ("a/b/c", "a/b/c")])
def test_multimodal_export_bad_model_exits_2_and_writes_nothing(model: str, needle: str, tmp_path: Path) -> None:
    cache = tmp_path / "empty-cache"
    out = tmp_path / "out" / "X.onnx"
    proc = _run([str(_console_script("multimodal-export")), "--model", model, "--input-signature", SIGNATURE,
                 "--output", str(out)], cache, tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in proc.stderr and "Traceback" not in proc.stderr
    if model.startswith("studio-test"):
        assert str(cache) in proc.stderr and "hf download studio-test/not-there" in proc.stderr
    assert not out.exists() and not out.parent.exists()
